#!/usr/bin/perl
# The book and the solutions volume build and hold what they should, read
# back from the PDFs as text.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use Test::More;

my $root = root();
my $book = "$root/build/book.pdf";
ok(-s $book, 'build/book.pdf was woven') or BAIL_OUT('no book');
my $text = pdf_text($book);
(my $flat = $text) =~ s/\s+/ /g;

for my $title ('Sizing the run', 'Building it',
               'The memory floor', 'Compute sets the fleet', 'The step',
               'Activation memory', 'The layout decision',
               'A reference trainer on one CPU', 'Sharded state: ZeRO and FSDP',
               "The planner’s plumbing", 'Interview drill', 'Exercises',
               'Bibliography', 'Chunks', 'Index of identifiers', 'Contents') {
    like($flat, qr/\Q$title\E/, "the book has '$title'");
}
unlike($flat, qr/\?\?/, 'no undefined reference (??) in the book');
# Code is copied from the page: the typewriter font keeps << and >> and two
# quotes as typed, not as guillemets or a closing quote.
unlike($text, qr/\xC2[\xAB\xBB]/, 'no guillemet in the book: code keeps << and >>');
like($flat, qr/\(1L << 30\)/, 'a shift in the code reads << on the page');
like($flat, qr/'' +skip 1 using/, "gnuplot's '' reads as two quotes on the page");
# No line sticks out into the margin (LaTeX's own report of an overfull line).
for my $volume ('book', 'solutions') {
    my $log = slurp("$root/build/tex/$volume.log") // '';
    my @over = grep { $_ > 1 } $log =~ /^Overfull \\hbox \(([\d.]+)pt too wide\)/mg;
    is(scalar @over, 0, "no line of build/$volume.pdf is more than 1pt too wide")
      or diag("overfull by: @over pt");
}
unlike($flat, qr/\bTODO\b|\bFIXME\b/, 'no TODO in the book');

# Worked numbers: the book's macros and transcripts against arithmetic done
# here, from the facts a reader brings (bytes per number, an H100's 80 GB and
# 989 TFLOP/s, eight GPUs a node), never against the program's own output:
# a program that drifted (14 B/param for mixed-precision Adam) would agree
# with itself.
my %macro = %{ read_macros("$root/build/numbers/0[12]-*.tex") };
sub agrees { return macro_agrees(\%macro, @_) }
my %gpu = (h100 => { memory => 80e9, flops => 989e12 }, h200 => { memory => 141e9 });
my ($USABLE, $PER_NODE, $FLEET) = (0.8, 8, 1024);
# Mixed-precision Adam: bf16 weights and gradients, fp32 master weights and
# two fp32 moments; the variants add an fp32 gradient accumulator.
my %bytes = (mixed        => 2 + 2 + 4 + 4 + 4,
             'fp32-grads' => 2 + 4 + 4 + 4 + 4,       # accumulator, no bf16 copy
             'mt-nlg'     => 2 + 2 + 4 + 4 + 4 + 4);  # both gradient copies
for my $case ([Floor => 100e9, 'h100', 'mixed'], [Seventy => 70e9, 'h200', 'mixed'],
              [FpGrads => 100e9, 'h100', 'fp32-grads'], [Mtnlg => 100e9, 'h100', 'mt-nlg']) {
    my ($p, $params, $gpu, $convention) = @$case;
    my $b = $bytes{$convention};
    my $static = $params * $b;
    my $usable = $gpu{$gpu}{memory} * $USABLE;
    my $need = round_up($static / $usable);
    my $nodes = round_up($need / $PER_NODE);
    agrees("${p}BytesPerParam", $b, "$p: $b B per parameter ($convention)");
    agrees("${p}StaticBytes", $static, "$p: the static state");
    agrees("${p}NodeBytes", $PER_NODE * $gpu{$gpu}{memory}, "$p: one node");
    agrees("${p}NodesOfState", $static / ($PER_NODE * $gpu{$gpu}{memory}), "$p: in nodes");
    agrees("${p}UsableBytesPerGpu", $usable, "$p: usable per GPU");
    agrees("${p}GpusMin", $need, "$p: GPUs to hold it");
    agrees("${p}Nodes", $nodes, "$p: whole nodes");
    agrees("${p}GpusWholeNodes", $need <= $PER_NODE ? $need : $nodes * $PER_NODE,
           "$p: GPUs in whole nodes");
    agrees("${p}BytesPerGpuSharded", $static / $FLEET, "$p: sharded over 1,024 GPUs");
}
# Chapter 2: 6 N D FLOPs on 1,024 H100s at 40 %, and on the floor's 32.
{
    my $flops = 6 * 100e9 * 2e12;
    my $rate = $FLEET * $gpu{h100}{flops} * 0.4;
    my $floor = $PER_NODE * round_up(round_up(100e9 * 16 / (80e9 * $USABLE)) / $PER_NODE);
    agrees('FleetFlops', $flops, 'chapter 2: 6 x 100e9 x 2e12 FLOPs');
    agrees('FleetFlopsPerSecond', $rate, 'chapter 2: the fleet rate');
    agrees('FleetSeconds', $flops / $rate, 'chapter 2: seconds');
    agrees('FleetDays', $flops / $rate / 86400, 'chapter 2: days');
    agrees('FleetGpuHours', $FLEET * $flops / $rate / 3600, 'chapter 2: GPU-hours');
    agrees('FleetFloorGpus', $floor, "chapter 2: chapter 1's floor in whole nodes");
    agrees('FleetFloorDays', $flops / ($floor * $gpu{h100}{flops} * 0.4) / 86400,
           'chapter 2: days on the floor');
    agrees('FleetFleetOverFloor', $FLEET / $floor, 'chapter 2: fleet over floor');
    agrees('DeadlineGpusNeeded', round_up($flops / ($gpu{h100}{flops} * 0.4 * 30 * 86400)),
           'chapter 2: GPUs for 30 days');
    my $days = sprintf('%.1f', $flops / $rate / 86400);
    like($flat, qr/\Q$days\E days/, "the days on 1,024 GPUs are in the prose ($days)");
    my $floor_days = sprintf('%.0f', $flops / ($floor * $gpu{h100}{flops} * 0.4) / 86400);
    $floor_days =~ s/(\d)(\d{3})$/$1,$2/;
    like($flat, qr/\Q$floor_days\E days/, "the floor's time is in the prose ($floor_days days)");
}
# The transcripts in the book print the same arithmetic.
{
    my $static = 100e9 * $bytes{mixed};
    (my $sci = sprintf('%.2g', $static)) =~ s/e\+?0*/e/;
    (my $gb = sprintf('%d', $static / 1e9)) =~ s/(\d)(\d{3})$/$1,$2/;
    my $line = "static state = 100e9 × $bytes{mixed} B = $sci B = $gb GB";
    ok(index($flat, $line) >= 0, "the memory-floor transcript is in the book: $line");
    my $rate = $FLEET * $gpu{h100}{flops} * 0.4;
    my $seconds = 1.2e24 / $rate;
    my $time = sprintf('time = 1.2e24 ÷ %s FLOP/s = %s s = %.1f days',
                       map({ (my $t = sprintf('%.3g', $_)) =~ s/e\+?0*/e/; $t } $rate, $seconds),
                       $seconds / 86400);
    ok(index($flat, $time) >= 0, "the training-time transcript is in the book: $time");
}

# Chapter 8's sharded trainer: the report of stage 3 on four ranks and the
# table of bytes sent come from this build's runs, whose JSON is kept.
{
    use JSON::PP qw(decode_json);
    my $data = "$root/build/data";
    like($flat, qr/sharded state = ZeRO stage 3 over 4 ranks; bytes held:/,
         "the stage-3 report is in the book");
    for my $stage (0 .. 3) {
        my $j = decode_json(slurp("$data/08-zero-minigpt-$stage-4.json"));
        my ($sent, $formula) = map { sprintf('%.1f kB', $j->{$_} / 1e3) }
                               qw(bytes_sent_per_step bytes_sent_formula);
        like($flat, qr/\Q$sent $formula\E/,
             "the table has stage ${stage}'s bytes sent: $sent against $formula");
    }
    ok(-s "$root/build/figures/08-zero-minigpt.pdf", 'figure 08-zero-minigpt was drawn');
}

# Figures.
for my $figure ('01-bytes', '02-days') {
    ok(-s "$root/build/figures/$figure.pdf", "figure $figure was drawn");
}
like($flat, qr/Figure 1\.1/, 'figure 1.1 is placed');
like($flat, qr/Figure 2\.1/, 'figure 2.1 is placed');

# Each chapter has at least six exercises.
for my $ex (glob "$root/exercises/*.tex") {
    my $items = () = exercise_items($ex);
    cmp_ok($items, '>=', 6, "$ex has at least six exercises");
}

# Each chapter closes with its interview drill. A file with no \chapter
# line continues the chapter of the file before it, and is read with it.
my (@names, %text);
for my $file (glob "$root/chapters/0*.nw") {
    open my $fh, '<', $file or die;
    my $src = join '', <$fh>;
    push @names, $file if $src =~ /\\chapter\{/ || !@names;
    $text{$names[-1]} .= $src;
}
for my $nw (@names) {
    my $src = $text{$nw};
    like($src, qr/\\section\{Interview drill\}/, "$nw has an interview drill");
    like($src, qr/What interviewers probe next/, "$nw has the probes");
    like($src, qr/Common mistakes/, "$nw has the common mistakes");
    like($src, qr/Key takeaways/, "$nw has the takeaways");
}

my $solutions = "$root/build/solutions.pdf";
ok(-s $solutions, 'build/solutions.pdf was woven');
my $s = pdf_text($solutions);
like($s, qr/The memory floor/, 'the solutions cover chapter 1');
like($s, qr/Compute sets the fleet/, 'the solutions cover chapter 2');
for my $title ('The step', 'Activation memory', 'The layout decision') {
    like($s, qr/\Q$title\E/, "the solutions cover '$title'");
}
# Part I comes before Part II, and each part's chapters in order.
my @order = ('Sizing the run', 'The memory floor', 'Compute sets the fleet',
             'The step', 'Activation memory', 'The layout decision',
             'Building it', 'A reference trainer on one CPU');
my ($toc) = $flat =~ /Contents(.*?)Index of identifiers/;
my @at = map { index($toc // '', $_) } @order;
ok(!grep({ $at[$_] < 0 || ($_ > 0 && $at[$_] < $at[$_ - 1]) } 0 .. $#at),
   'the contents list Part I (chapters 1-5) before Part II (chapter 6 on)')
  or diag(join ', ', map { "$order[$_] at $at[$_]" } 0 .. $#at);
# The book speaks of its subject, never of the documents it grew from: not
# in the PDFs, and not in the sources (prose, code comments, the solution
# scripts), where the random generator's seed is the only seed there is.
my $grew = qr/\bthe\s+seed(?:'s|’s|\s+(?:rounds|does|says|assumes|states|gives|answer|documents?))\b
             |\bseed(?:'s|’s)\s+(?:design|numbers?|figures?|rounding|answer)\b
             |\brunning\s+example(?:'s|’s)\s+source\b
             |\bsource\s+(?:documents?|material)\b/xi;
# A hit is shown with the 60 characters before it and the 40 after it
# (found by where $grew matched: a pattern that began with .{0,60} would be
# tried at every character of the book, seconds of work for no match).
sub grew_from {
    my ($text) = @_;
    return undef unless $text =~ $grew;
    my $from = $-[0] < 60 ? 0 : $-[0] - 60;
    return substr($text, $from, $+[0] + 40 - $from);
}
(my $flat_solutions = $s) =~ s/\s+/ /g;
for my $volume (['book', $flat], ['solutions', $flat_solutions]) {
    my ($name, $body) = @$volume;
    my $hit = grew_from($body);
    ok(!defined $hit, "build/$name.pdf never speaks of the documents the book grew from")
      or diag($hit);
}
for my $file (glob("$root/chapters/*.nw"), glob("$root/chapters/*.tex"),
              glob("$root/exercises/*.tex"), glob("$root/solutions/*.tex"),
              glob("$root/solutions/*.sh")) {
    my $hit = grew_from(slurp($file) // '');
    ok(!defined $hit, "$file never speaks of the documents the book grew from")
      or diag($hit);
}
unlike($s, qr/\?\?/, 'no undefined reference in the solutions');

# The bibliography: every entry is cited, in the book or the solutions, and
# every citation has an entry; neither volume prints an unresolved [?].
{
    my $bib = slurp("$root/chapters/bibliography.tex") // '';
    my @keys = $bib =~ /^\\bibitem(?:\[[^\]]*\])?\{([^}]+)\}/mg;
    cmp_ok(scalar @keys, '>=', 20, 'the bibliography has its entries (' . @keys . ')');
    my %cited;
    for my $file (glob("$root/chapters/*.nw"), "$root/chapters/book.tex",
                  glob("$root/exercises/*.tex"), glob("$root/solutions/*.tex")) {
        my $src = slurp($file) // '';
        $src =~ s/(?<!\\)%.*$//mg;                      # not in a comment
        while ($src =~ /\\cite(?:\[[^\]]*\])?\{([^}]+)\}/g) {
            $cited{$_} //= $file for map { s/^\s+|\s+$//gr } split /,/, $1;
        }
    }
    my %entry = map { $_ => 1 } @keys;
    for my $key (@keys) {
        ok($cited{$key}, "bibliography entry '$key' is cited somewhere");
    }
    for my $key (sort keys %cited) {
        ok($entry{$key}, "citation '$key' ($cited{$key}) has a bibliography entry");
    }
    my %seen;
    is(scalar(grep { $seen{$_}++ } @keys), 0, 'no bibliography key is defined twice');
    unlike($flat, qr/\[\?\]/, 'no unresolved citation [?] in the book');
    unlike($flat_solutions, qr/\[\?\]/, 'no unresolved citation [?] in the solutions');
    like($flat_solutions, qr/Bibliography/, 'the solutions volume carries the bibliography it cites');
}
done_testing();
