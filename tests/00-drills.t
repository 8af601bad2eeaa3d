#!/usr/bin/perl
# The drill sheet, build/drills.pdf: a card for every chapter, each on one
# page with its five parts; LaTeX found every macro and reference; no number
# is typed into a card by hand; and the numbers the cards print are the
# book's macros, read back from the PDF.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use Test::More;
use Encode ();
use utf8;
binmode(Test::More->builder->$_, ':encoding(UTF-8)')
  for qw(output failure_output todo_output);

my $root = root();
my $pdf = "$root/build/drills.pdf";
ok(-s $pdf, 'build/drills.pdf was woven') or BAIL_OUT('no drill sheet');

# The chapters, in the book's order: each numbered chapter's first file
# (chapters/NN-name.nw with a \chapter line) and its title.
my @chapters;
for my $file (sort glob "$root/chapters/[0-8]*.nw") {
    my $source = slurp($file);
    next unless $source =~ /^\\chapter\{([^{}]+)\}/m;
    my $title = $1;
    my ($name) = $file =~ m{/(\d\d-[\w-]+)\.nw$};
    push @chapters, { name => $name, title => $title };
}
is(scalar @chapters, 14, 'the book has fourteen chapters to drill');

# The sources: drills/drills.tex inputs one card a chapter, named as the
# chapter's first file, in the chapters' order.
my $master = slurp("$root/drills/drills.tex") // '';
my @inputs = $master =~ /^\\input\{drills\/([^{}]+?)(?:\.tex)?\}/mg;
is_deeply(\@inputs, [map { $_->{name} } @chapters],
          'drills.tex inputs a card for every chapter, in order')
  or diag "inputs: @inputs";
my @cards = map { my $f = "$root/drills/$_->{name}.tex";
                  +{ %$_, file => $f, source => slurp($f) // '' } } @chapters;

# The files of numbers the book inputs: a card may read only those.
my %book_numbers;
for my $file (glob("$root/chapters/*.nw"), "$root/chapters/book.tex") {
    $book_numbers{$_} = 1
      for (slurp($file) // '') =~ /\\input\{build\/numbers\/([\w-]+)\.tex\}/g;
}
# A file's macros: name => the text it prints.
sub macros_of {
    my %macro;
    for my $name (@_) {
        my $text = slurp("$root/build/numbers/$name.tex") // next;
        $macro{$1} = $2 while $text =~ /^\\newcommand\{\\(\w+)\}\{(.*)\}$/mg;
    }
    return \%macro;
}
my $all_numbers = macros_of(map { m{/([\w-]+)\.tex$} } glob "$root/build/numbers/*.tex");
sub numbers_read { return map { split /,/ } $_[0] =~ /\\drillnumbers\{([^{}]*)\}/g }

# A source without its comments.
sub uncommented { (my $s = $_[0]) =~ s/(?<!\\)%.*$//mg; return $s }

# The rule for digits in a card's source. Every derived number is a macro, so
# a numeral typed by hand is allowed only
#  - inside mathematics, as an equation's constant: a whole number below 100
#    (the 6 of 6ND, the 34 of 34sbh, the 2 of 2(n-1)/n);
#  - inside a name, glued to the letters before it (H100, TP8, bf16, fp32,
#    E4M3), or one of the names 1F1B, 3D, Llama 3 and GPT-3;
#  - as the number of a ZeRO stage (stage 3, stages 0, 1 and 2, stages 0 to 2).
# Anything else, a 1.6 or a 1,024 or a lone 8, fails, with where it is.
sub typed_numbers {
    my ($source) = @_;
    my $text = uncommented($source);
    $text =~ s/\\(?:drillnumbers|input|label|ref|cite|vspace|hspace)\{[^{}]*\}//g;
    $text =~ s/\\setlength\{[^{}]*\}\{[^{}]*\}//g;
    my @bad;
    my @math;
    push @math, $1 while $text =~ s/\\\[(.*?)\\\]/ /s;
    push @math, $2 while $text =~ s/\\begin\{(gather\*|align\*|equation\*)\}(.*?)\\end\{\1\}/ /s;
    push @math, $1 while $text =~ s/(?<!\\)\$(.+?)(?<!\\)\$/ /s;
    for my $math (@math) {
        for my $numeral ($math =~ /(\d[\d.,]*\d|\d)/g) {
            push @bad, "'$numeral' in \$$math\$" unless $numeral =~ /^\d{1,2}$/;
        }
    }
    # The digits allowed become #, so that what is left reads as it was.
    $text =~ s/\b(1F1B|3D|Llama~3|GPT-3)\b/$1 =~ tr{0-9}{#}r/ge;
    $text =~ s/([A-Za-z])(\d+)/$1 . ('#' x length $2)/ge;
    $text =~ s/(\b[Ss]tages?[~ ]\d(?:(?:, ?| and | or | to |--)\d)*)/$1 =~ tr{0-9}{#}r/ge;
    while ($text =~ /(.{0,30})(\d[\d.,]*)(.{0,30})/sg) {
        my ($before, $numeral, $after) = ($1, $2, $3);
        (my $where = "$before\[$numeral\]$after") =~ s/\s+/ /g;
        push @bad, "'$numeral' in prose: ...$where...";
    }
    return @bad;
}

# The laid-out text of each page.
my @pages = split /\f/, pdf_text($pdf);
pop @pages if @pages && $pages[-1] !~ /\S/;
my @card_pages = grep { $pages[$_] =~ /^\s*Chapter\s+\d+\s/ } 0 .. $#pages;
is(scalar @card_pages, 14, 'the sheet has fourteen cards');
is($card_pages[0] // -1, 1, 'the cards begin after one front page');
is(scalar @pages, 1 + 14, 'each card fits on one page: a page a card, no more')
  or diag(scalar(@pages) . ' pages');
my $front = $pages[0] // '';
like($front, qr/How to use it/, 'the front page says how to use the sheet');
like($front, qr/cover everything below it/, 'the front page says to cover the answer');
like($front, qr/aloud/, 'the front page says to answer aloud');

my @parts = ('The question', 'The common wrong answer', 'The napkin arithmetic',
             'The key equation', 'The short answer');
for my $i (0 .. $#cards) {
    my $card = $cards[$i];
    my $n = $i + 1;
    my $label = "card $n ($card->{name})";
    ok($card->{source} ne '', "$label: drills/$card->{name}.tex exists") or next;
    my $page = $pages[$card_pages[$i] // -1] // '';
    (my $flat = Encode::decode('UTF-8', $page)) =~ s/[\s\x{a0}]+/ /g;

    # Its heading: the chapter's number and title, as the book has them.
    like($flat, qr/^\s*Chapter \Q$n\E \Q$card->{title}\E/,
         "$label: headed Chapter $n, $card->{title}");
    my $headings = () = $flat =~ /Chapter \d+ /g;
    is($headings, 1, "$label: alone on its page");

    # Its five parts, each once, in order, in the source and on the page.
    my @in_source = uncommented($card->{source})
      =~ /\\card(question|wrong|napkin|equation|answer)\b/g;
    is("@in_source", 'question wrong napkin equation answer',
       "$label: the five parts in the source, in order");
    my @at = map { index($flat, "$_.") } @parts;
    ok(!grep({ $_ < 0 } @at) && "@at" eq join(' ', sort { $a <=> $b } @at),
       "$label: the five parts on the page, in order")
      or diag "at @at in: $flat";
    for my $k (0 .. $#parts) {
        my $next = $k < $#parts ? $at[$k + 1] : length $flat;
        my $body = $at[$k] < 0 ? '' : substr($flat, $at[$k] + length($parts[$k]) + 1,
                                             $next - $at[$k] - length($parts[$k]) - 1);
        cmp_ok(length($body =~ s/^\s+|\s+$//gr), '>', 40,
               "$label: '$parts[$k]' says something");
    }

    # No number typed by hand.
    my @typed = typed_numbers($card->{source});
    is(scalar @typed, 0, "$label: every number in its source is a macro")
      or diag join "\n", @typed;

    # Its numbers come from the book's files, named by the card itself.
    my @files = numbers_read($card->{source});
    ok(@files, "$label: names the numbers files it reads");
    my @foreign = grep { !$book_numbers{$_} } @files;
    is("@foreign", '', "$label: reads only numbers files the book inputs");
    my $own = macros_of(@files);
    my %used = map { $_ => 1 } uncommented($card->{source}) =~ /\\([A-Za-z]+)/g;
    my @elsewhere = grep { exists $all_numbers->{$_} && !exists $own->{$_} }
                    sort keys %used;
    is("@elsewhere", '', "$label: every number macro it uses is in a file it names");

    # The numbers on the page are the macros' values in build/numbers.
    my ($checked, @missing) = (0);
    for my $name (sort grep { exists $own->{$_} } keys %used) {
        my $printed = Encode::decode('UTF-8', $own->{$name});
        $printed =~ s/\\ensuremath\{(-?[\d.]+)\\times10\^\{(-?\d+)\}\}/$1 × 10$2/g;
        $printed =~ s/\\ensuremath\{\\mu\}/µ/g;
        $printed =~ s/\\%/%/g;
        $printed =~ s/~/ /g;
        my @pieces = grep { $_ ne '' } split /\\[,;! ]|\s+/, $printed;
        next if !@pieces || grep { /[\\{}\$^_]/ } @pieces;
        $checked++;
        my $pattern = join '\s?', map { my $p = quotemeta; $p =~ s/\\-/[-\x{2212}]/g; $p }
                                  @pieces;
        push @missing, "\\$name = $printed"
          unless $flat =~ /(?<![\d.])$pattern(?![\d])/;
    }
    cmp_ok($checked, '>=', 4, "$label: prints at least four of the book's numbers");
    is("@missing", '', "$label: the $checked numbers it prints are build/numbers' values")
      or diag "not on the page: @missing";
}

# The arithmetic the cards show, redone here from the inputs the cards
# print and the facts a reader brings (eight GPUs a node, 86,400 s a day),
# so that a number that drifted from its derivation fails even where the
# card prints the macro faithfully.
{
    my %m = %{ macros_of(map { numbers_read(uncommented($_->{source})) } @cards) };
    my $v = sub { my ($value) = printed_number($m{$_[0]}); return $value // 0 };
    my $agrees = sub { macro_agrees(\%m, @_) };
    my $PER_NODE = 8;
    # Card 1: the floor.
    my $static = $v->('FloorParams') * $v->('FloorBytesPerParam');
    $agrees->('FloorStaticBytes', $static, 'card 1: the state, parameters x bytes');
    my $gpus = round_up($static / $v->('FloorUsableBytesPerGpu'));
    $agrees->('FloorGpusMin', $gpus, 'card 1: the GPUs that hold it');
    $agrees->('FloorNodes', round_up($gpus / $PER_NODE), 'card 1: in whole nodes');
    # Card 2: 6ND over the fleet's rate.
    my $flops = 6 * $v->('FleetParams') * $v->('FleetTokens');
    $agrees->('FleetFlops', $flops, 'card 2: 6ND');
    my $rate = $v->('FleetGpus') * $v->('FleetPeakFlops') * $v->('FleetMfu') / 100;
    $agrees->('FleetDays', $flops / $rate / 86400, 'card 2: the days on the fleet');
    # Card 3: a GPU's FLOPs a step, 6NB/G.
    $agrees->('DesignAFlopsPerGpuPerStep',
              6 * $v->('DesignAParams') * $v->('DesignATokensPerStep') / $v->('DesignAGpus'),
              'card 3: 6NB/G');
    # Card 10: the bubble of p stages and m micro-batches.
    my ($p, $mb) = ($v->('PipePp'), $v->('PipeMicroBatches'));
    $agrees->('PipeBubble', 100 * ($p - 1) / ($mb + $p - 1), 'card 10: (p-1)/(m+p-1)');
    $agrees->('PipeBubbleOverCompute', 100 * ($p - 1) / $mb, 'card 10: (p-1)/m');
    # Card 13: the fleet's interval and Young's.
    my $mtbi = $v->('FailDrillWindowDays') * 86400 / $v->('FailDrillInterruptions');
    $agrees->('FailDrillMtbiSeconds', $mtbi, 'card 13: the window over the interruptions');
    close_to($v->('FailDrillYoung'), sqrt(2 * $v->('FailDrillWrite') * $mtbi), 0.01,
             "card 13: Young's interval, sqrt(2 delta M)");
    close_to($v->('FailDrillBigMtbi'),
             $mtbi * $v->('FailDrillGpus') / $v->('FailDrillBigGpus'), 0.01,
             'card 13: four times the fleet, a quarter of the interval');
    # Card 14: the all-to-all, 8kh bytes a token and layer.
    my $bytes = 8 * $v->('ExpertDrillTopK') * $v->('ExpertDrillHidden');
    $agrees->('ExpertDrillAlltoallBytes', $bytes, 'card 14: 8kh bytes');
    my $ep = $v->('ExpertDrillEp');
    $agrees->('ExpertDrillAlltoallLeaving', $bytes * ($ep - 1) / $ep,
              'card 14: the share that leaves the GPU');
}

# The front page's numbers follow the same rules.
{
    my ($body) = $master =~ /\\begin\{document\}(.*)\\end\{document\}/s;
    my @typed = typed_numbers($body // '');
    is(scalar @typed, 0, 'the front page types no number by hand') or diag join "\n", @typed;
    my @foreign = grep { !$book_numbers{$_} } numbers_read(uncommented($master));
    is("@foreign", '', 'the front page reads only numbers files the book inputs');
}

# The rule can fail: a number typed into a card, a decimal in an equation.
ok(scalar typed_numbers('the state is 1.6\,TB'), 'a typed 1.6 is caught');
ok(scalar typed_numbers('on 1,024 GPUs'), 'a typed 1,024 is caught');
ok(scalar typed_numbers('\[ x = 0.574 \]'), 'a typed decimal in an equation is caught');
ok(!typed_numbers('TP8 on H100s in bf16, stages 0, 1 and 2, $6ND$'),
   'names, stage numbers and equation constants pass');

# LaTeX found everything: no undefined macro or reference, no line out in
# the margin.
my $log = slurp("$root/build/tex/drills.log") // '';
ok($log ne '', 'the LaTeX log of the sheet is there');
unlike($log, qr/Undefined control sequence/, 'no undefined macro');
unlike($log, qr/LaTeX Warning: (?:Reference|Citation) .* undefined|There were undefined/,
       'no undefined reference or citation');
my @over = grep { $_ > 1 } $log =~ /^Overfull \\hbox \(([\d.]+)pt too wide\)/mg;
is(scalar @over, 0, 'no line of the sheet is more than 1pt too wide') or diag "@over pt";
unlike(join('', @pages), qr/\?\?/, 'no ?? on the sheet');

done_testing();
