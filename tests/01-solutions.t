#!/usr/bin/perl
# tests/01-solutions.t: the worked solutions to chapter 1's exercises.
#
# For every exercise this test runs `fleet memory --json` with the exercise's
# inputs and compares the answers with the same arithmetic done here, from the
# datasheet figures and the byte counts, without the tool. Counts (GPUs,
# nodes) must agree exactly; byte counts, fractions and seconds to a relative
# 1e-9, which is floating-point rounding and nothing else. It also checks the
# claims the solutions' prose makes (which conventions tie, where the usable
# fraction saves a node), that the exercises are numbered as the solutions
# volume names them and give no answers away, and that build/solutions.pdf
# prints each heading with its key numbers in the prose.
#
# Run after `make`:  prove -v tests/01-solutions.t
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use Encode ();
use POSIX qw();
use Test::More;

my $root  = root();
my $fleet = "$root/build/bin/fleet";

# ------------------------------------------------------- first principles --
# Datasheet memory in decimal bytes, eight GPUs to a node.
my %memory   = (h100 => 80e9, h200 => 141e9, a100 => 80e9);
my $per_node = 8;
# Bytes per parameter: bf16 weights + bf16 gradients + fp32 master weights
# + fp32 gradient accumulator + fp32 Adam moments (m and v, 4 B each).
my %bytes = (
    lean         => 2 + 0 + 0 + 0 + 8,
    mixed        => 2 + 2 + 4 + 0 + 8,
    'fp32-grads' => 2 + 0 + 4 + 4 + 8,
    'mt-nlg'     => 2 + 2 + 4 + 4 + 8,
);
my $rel = 1e-9;    # relative tolerance for non-count fields

# The floor computed here: the reference every fleet answer is checked against.
sub floor_by_hand {
    my (%a) = @_;
    my $p = {
        params => $a{params}, bytes => $a{bytes},
        memory => $memory{ $a{gpu} // 'h100' },
        usable => $a{usable} // 0.8, gpus => $a{gpus} // 1024,
        bw => $a{bw} // 2e12, ckpt => $a{ckpt} // $a{bytes},
    };
    $p->{static}   = $p->{params} * $p->{bytes};
    $p->{per_gpu}  = $p->{memory} * $p->{usable};
    # round_up forgives floating-point noise: 80e9 * 0.8 is not exactly
    # 64e9 in binary.
    $p->{gpus_min} = round_up($p->{static} / $p->{per_gpu});
    $p->{nodes}    = round_up($p->{gpus_min} / $per_node);
    # A job inside one node gets the GPUs it needs; one spanning nodes
    # gets whole nodes.
    $p->{whole}    = $p->{gpus_min} <= $per_node ? $p->{gpus_min}
                                                 : $p->{nodes} * $per_node;
    $p->{sharded}  = $p->{static} / $p->{gpus};
    $p->{ckpt_bytes} = $p->{params} * $p->{ckpt};
    $p->{seconds}  = $p->{ckpt_bytes} / $p->{bw};
    $p->{node_bytes} = $per_node * $p->{memory};
    return $p;
}

# ---------------------------------------------------------------- fleet ----
# Compare every answer field of one run with the hand computation.
sub check_run {
    my ($label, $args, $hand) = @_;
    my $j = eval { fleet_json('memory', @$args) };
    ok($j, "$label: fleet memory @$args runs") or do { diag($@); return };
    close_to($j->{static_bytes}, $hand->{static}, $rel, "$label: static state");
    close_to($j->{usable_bytes_per_gpu}, $hand->{per_gpu}, $rel,
             "$label: usable bytes per GPU");
    close_to($j->{nodes_of_state}, $hand->{static} / $hand->{node_bytes}, $rel,
             "$label: nodes' worth of state");
    is($j->{gpus_min}, $hand->{gpus_min}, "$label: GPUs to hold the state");
    is($j->{nodes}, $hand->{nodes}, "$label: whole nodes");
    is($j->{gpus_whole_nodes}, $hand->{whole}, "$label: GPUs in whole nodes");
    close_to($j->{bytes_per_gpu_sharded}, $hand->{sharded}, $rel,
             "$label: state per GPU, sharded over $hand->{gpus}");
    close_to($j->{checkpoint_bytes}, $hand->{ckpt_bytes}, $rel, "$label: checkpoint");
    close_to($j->{checkpoint_seconds}, $hand->{seconds}, $rel,
             "$label: checkpoint seconds");
    return $j;
}

ok(-x $fleet, "build/bin/fleet exists (run make first)")
    or do { done_testing(); exit 1 };

# --------------------------------------------------------- the exercises ----
# Each entry: the exercise, the runs (fleet flags and the same inputs for the
# hand computation), and the strings its solution must print, formatted here.
my %hand;    # run label => hand computation

# 1.1: 70e9 on H200 and on H100.
$hand{'1.1 h200'} = floor_by_hand(params => 70e9, bytes => 16, gpu => 'h200');
$hand{'1.1 h100'} = floor_by_hand(params => 70e9, bytes => 16, gpu => 'h100');
check_run('1.1 h200', [qw(--params 70e9 --gpu h200)], $hand{'1.1 h200'});
check_run('1.1 h100', [qw(--params 70e9 --gpu h100)], $hand{'1.1 h100'});
{
    my ($a, $b) = @hand{ '1.1 h200', '1.1 h100' };
    ok($a->{static} < $a->{node_bytes} && $a->{nodes} == 2,
       '1.1: the near miss: less than one H200 node of state, yet two nodes');
    ok($b->{nodes} > $a->{nodes}, '1.1: the H100 floor needs more nodes');
}

# 1.2: the usable fraction.
for my $u (0.9, 0.8, 0.7, 0.83, 0.84) {
    $hand{"1.2 $u"} = floor_by_hand(params => 100e9, bytes => 16, usable => $u);
    check_run("1.2 usable $u", ['--params', '100e9', '--usable', $u],
              $hand{"1.2 $u"});
}
{
    my $at80 = $hand{'1.2 0.8'}{nodes};
    my ($first) = grep {
        floor_by_hand(params => 100e9, bytes => 16, usable => $_ / 100)->{nodes}
            < $at80
    } 1 .. 100;
    is($first, 84, '1.2: 84 % is the smallest whole percentage that saves a node');
    is($hand{'1.2 0.7'}{nodes}, $at80, '1.2: at 70 % the whole-node floor is as at 80 %');
    ok($hand{'1.2 0.9'}{nodes} < $at80, '1.2: at 90 % it is one node less');
}

# 1.3: 175e9 on A100 under four conventions.
for my $c (qw(lean mixed fp32-grads mt-nlg)) {
    $hand{"1.3 $c"} = floor_by_hand(params => 175e9, bytes => $bytes{$c},
                                    gpu => 'a100');
    my $j = check_run("1.3 $c", ['--params', '175e9', '--gpu', 'a100',
                                 '--precision', $c], $hand{"1.3 $c"});
    is($j->{bytes_per_param}, $bytes{$c}, "1.3 $c: bytes per parameter")
        if $j;
}
is($hand{'1.3 fp32-grads'}{nodes}, $hand{'1.3 mt-nlg'}{nodes},
   '1.3: fp32-grads and mt-nlg land on the same number of nodes');
isnt($hand{'1.3 fp32-grads'}{gpus_min}, $hand{'1.3 mt-nlg'}{gpus_min},
     '1.3: ... though their bare GPU counts differ');

# 1.4: the largest model on one H100.
my $largest = POSIX::floor(80e9 * 0.8 / 16 + 0.5);
is($largest, 4e9, '1.4: the largest model on one H100 is usable memory / 16 B');
$hand{'1.4 fits'}  = floor_by_hand(params => 4e9,   bytes => 16);
$hand{'1.4 over'}  = floor_by_hand(params => 4.1e9, bytes => 16);
$hand{'1.4 seven'} = floor_by_hand(params => 7e9,   bytes => 16);
check_run('1.4 fits',  [qw(--params 4e9)],   $hand{'1.4 fits'});
check_run('1.4 over',  [qw(--params 4.1e9)], $hand{'1.4 over'});
check_run('1.4 seven', [qw(--params 7e9)],   $hand{'1.4 seven'});
is($hand{'1.4 fits'}{gpus_min}, 1, '1.4: 4e9 parameters fit one GPU');
is($hand{'1.4 over'}{gpus_min}, 2, '1.4: a little more needs two');

# 1.5: 405e9, sharded over 16,384 GPUs.
$hand{'1.5'} = floor_by_hand(params => 405e9, bytes => 16, gpus => 16384);
check_run('1.5', [qw(--params 405e9 --gpus 16384)], $hand{'1.5'});

# 1.6: an 8-bit optimizer: bf16 w + bf16 g + fp32 master + 1 B m + 1 B v.
my $eight_bit = 2 + 2 + 4 + 1 + 1;
$hand{'1.6'} = floor_by_hand(params => 100e9, bytes => $eight_bit);
check_run('1.6 8-bit', ['--params', '100e9', '--bytes-per-param', $eight_bit],
          $hand{'1.6'});
$hand{'1.6 lean'} = floor_by_hand(params => 100e9, bytes => $bytes{lean});
check_run('1.6 lean', [qw(--params 100e9 --precision lean)], $hand{'1.6 lean'});
is($hand{'1.6'}{whole}, $hand{'1.6 lean'}{whole},
   '1.6: the 8-bit optimizer and the lean convention have the same floor');

# 1.7: checkpoints: the mixed state less the bf16 gradients, then less the
# bf16 weights too; written by all ranks at 2 TB/s or by one at 5 GB/s.
my $no_grads   = $bytes{mixed} - 2;
my $no_weights = $no_grads - 2;
is($no_grads, 14, '1.7: a checkpoint without bf16 gradients is 14 B/param');
$hand{'1.7 ranks'}  = floor_by_hand(params => 100e9, bytes => 16,
                                    ckpt => $no_grads);
$hand{'1.7 one'}    = floor_by_hand(params => 100e9, bytes => 16,
                                    ckpt => $no_grads, bw => 5e9);
$hand{'1.7 master'} = floor_by_hand(params => 100e9, bytes => 16,
                                    ckpt => $no_weights);
check_run('1.7 all ranks', ['--params', '100e9',
                            '--checkpoint-bytes-per-param', $no_grads],
          $hand{'1.7 ranks'});
check_run('1.7 one writer', ['--params', '100e9',
                             '--checkpoint-bytes-per-param', $no_grads,
                             '--checkpoint-bandwidth', '5e9'], $hand{'1.7 one'});
check_run('1.7 master only', ['--params', '100e9',
                              '--checkpoint-bytes-per-param', $no_weights],
          $hand{'1.7 master'});
close_to($hand{'1.7 ranks'}{ckpt_bytes}, 1.4e12, $rel, '1.7: 1.4 TB for 100e9 parameters');
close_to($hand{'1.7 one'}{seconds}, 280, $rel, '1.7: 280 s through one 5 GB/s writer');

# 1.8: the floor, spread over its own GPUs, and with every byte usable.
$hand{'1.8 floor'} = floor_by_hand(params => 100e9, bytes => 16, gpus => 32);
$hand{'1.8 all'}   = floor_by_hand(params => 100e9, bytes => 16, usable => 1);
check_run('1.8 floor', [qw(--params 100e9 --gpus 32)], $hand{'1.8 floor'});
check_run('1.8 all', [qw(--params 100e9 --usable 1)], $hand{'1.8 all'});
is($hand{'1.8 floor'}{whole}, 32, '1.8: the running example floor is 32 GPUs');

# ------------------------------------------------ formatting, done here ----
# Numbers as the solutions print them: bytes to three significant figures in
# the largest decimal unit below them, counts with thousands separators.
sub three_figures {
    my ($x) = @_;
    return '0' if $x == 0;
    my $decimals = 2 - POSIX::floor(log(abs $x) / log(10) + 1e-12);
    $decimals = 0 if $decimals < 0;
    my $s = sprintf('%.*f', $decimals, $x);
    $s =~ s/\.?0+$// if $s =~ /\./;
    return $s;
}

sub bytes_text {
    my ($b) = @_;
    my @units = ([1e15, 'PB'], [1e12, 'TB'], [1e9, 'GB'], [1e6, 'MB'],
                 [1e3, 'kB']);
    for my $u (@units) {
        return three_figures($b / $u->[0]) . $u->[1] if $b >= $u->[0];
    }
    return "${b}B";
}

# A time as the programs print it: us below a millisecond, ms below a second.
sub duration_text {
    my ($s) = @_;
    return three_figures($s * 1e6) . 'us' if $s < 1e-3;
    return three_figures($s * 1e3) . 'ms' if $s < 1;
    return three_figures($s) . 's';
}

sub gpus_text { my ($n) = @_; return grouped($n) . ($n == 1 ? 'GPU' : 'GPUs') }

my %key_numbers = (
    '1.1' => [ bytes_text($hand{'1.1 h200'}{static}),
               bytes_text($hand{'1.1 h200'}{per_gpu}),
               gpus_text($hand{'1.1 h200'}{gpus_min}),
               gpus_text($hand{'1.1 h200'}{whole}),
               gpus_text($hand{'1.1 h100'}{gpus_min}),
               gpus_text($hand{'1.1 h100'}{whole}) ],
    '1.2' => [ bytes_text($hand{'1.2 0.9'}{per_gpu}),
               gpus_text($hand{'1.2 0.9'}{gpus_min}),
               gpus_text($hand{'1.2 0.9'}{whole}),
               bytes_text($hand{'1.2 0.84'}{per_gpu}),
               "$hand{'1.2 0.9'}{nodes}nodes" ],
    '1.3' => [ (map { bytes_text($hand{"1.3 $_"}{static}) }
                    qw(lean mixed fp32-grads mt-nlg)),
               "$hand{'1.3 mt-nlg'}{nodes}nodes",
               gpus_text($hand{'1.3 mt-nlg'}{whole}) ],
    '1.4' => [ bytes_text($hand{'1.4 fits'}{per_gpu}),
               gpus_text($hand{'1.4 fits'}{gpus_min}),
               bytes_text($hand{'1.4 over'}{static}),
               gpus_text($hand{'1.4 over'}{gpus_min}),
               bytes_text($hand{'1.4 seven'}{static}) ],
    '1.5' => [ bytes_text($hand{'1.5'}{static}),
               gpus_text($hand{'1.5'}{gpus_min}),
               gpus_text($hand{'1.5'}{whole}),
               bytes_text($hand{'1.5'}{sharded}),
               grouped(16384) ],
    '1.6' => [ bytes_text($hand{'1.6'}{static}),
               gpus_text($hand{'1.6'}{gpus_min}),
               gpus_text($hand{'1.6 lean'}{whole}) ],
    '1.7' => [ bytes_text($hand{'1.7 ranks'}{ckpt_bytes}),
               duration_text($hand{'1.7 ranks'}{seconds}),
               duration_text($hand{'1.7 one'}{seconds}),
               bytes_text($hand{'1.7 master'}{ckpt_bytes}),
               duration_text($hand{'1.7 master'}{seconds}) ],
    '1.8' => [ bytes_text($hand{'1.8 floor'}{sharded}),
               gpus_text($hand{'1.8 all'}{gpus_min}),
               gpus_text($hand{'1.8 all'}{whole}),
               gpus_text($hand{'1.8 floor'}{whole}) ],
    # The lab (make lab LAB=memory-floor): its grader checks the numbers.
    '1.9' => [],
);
my @exercises = sort keys %key_numbers;

# A pattern for a number as printed: white space (a thin space, a line break)
# may fall anywhere in it, and the number may not be the tail of a longer one.
sub spaced {
    my ($want) = @_;
    my $pattern = join '\s*', map { quotemeta } split //, $want;
    return qr/$pattern/;
}

# ------------------------------------------------------- the exercise file --
my $statements = slurp("$root/exercises/01-memory-floor.tex");
$statements = Encode::decode_utf8($statements) if defined $statements;
ok(defined $statements, 'exercises/01-memory-floor.tex is readable');
$statements //= '';
(my $no_comments = $statements) =~ s/(?<!\\)%.*$//mg;
like($no_comments, qr/\\section\{Exercises\}/, 'exercises: a section');
unlike($no_comments, qr/enumitem/, 'exercises: plain enumerate, no enumitem');

# Top-level items with their bold titles, and where the checkpoint one falls.
my @items = map { Encode::decode_utf8($_) }
            exercise_items("$root/exercises/01-memory-floor.tex");
my @titles = map { /^\s*\\textbf\{([^}]*)\}/ ? $1 : '' } @items;
my ($ckpt) = grep { $items[$_ - 1] =~ /\\label\{ex:ckpt\}/ } 1 .. @items;
cmp_ok(scalar @titles, '>=', 7, 'exercises: at least seven');
is(scalar @titles, scalar @exercises,
   'exercises: as many as the solutions work');
is($ckpt, 7, 'exercises: \label{ex:ckpt} is on Exercise 1.7');

# The statements give inputs, never the answers.
(my $statement_text = $no_comments) =~ s/\\,|~/ /g;
for my $n (@exercises) {
    my @answers = grep { /[A-Za-z]$/ && !/GPUs?$/ && !/^16,384$/ }
                  @{ $key_numbers{$n} };
    my @given = grep { $statement_text =~ /(?<![\d.,])${\ spaced($_)}/ }
                @answers;
    ok(!@given, "exercise $n does not state its answers")
        or diag("  found: @given");
}

# ------------------------------------------------------------- the PDFs ----
# The text in reading order, decoded (one character a character).
sub pdf_characters {
    my ($pdf) = @_;
    my $text = eval { pdf_text($pdf, layout => 0) };
    return defined $text ? Encode::decode_utf8($text) : undef;
}

my $solutions_pdf = "$root/build/solutions.pdf";
ok(-s $solutions_pdf, 'build/solutions.pdf exists');
my $text = -s $solutions_pdf ? pdf_characters($solutions_pdf) : undef;
ok(defined $text, 'pdftotext reads build/solutions.pdf');
$text //= '';
unlike($text, qr/\?\?/, 'solutions: no unresolved references');

# The body of chapter 1: from its opening page to the next chapter. Each
# exercise's section runs from its heading, a line of its own, to the next.
my $start = index($text, 'Chapter 1');
# Chapter 2's heading is a line of its own; the prose names it too.
my $end   = $text =~ /^Chapter 2$/m ? $-[0] : -1;
my $body  = $start < 0 ? '' : substr($text, $start,
                                     $end < 0 ? length($text) - $start
                                              : $end - $start);
my @at;
my $from = 0;
for my $n (@exercises) {
    my $heading = qr/^Exercise \Q$n\E$/m;
    pos($body) = $from;
    if ($body =~ /$heading/g) {
        push @at, $-[0];
        $from = pos($body);
        pass("solutions: heading Exercise $n");
    } else {
        push @at, undef;
        fail("solutions: heading Exercise $n");
    }
}
for my $i (0 .. $#exercises) {
    my $n = $exercises[$i];
    next unless defined $at[$i];
    my $stop = (grep { defined } @at[ $i + 1 .. $#at ])[0] // length $body;
    my $section = substr($body, $at[$i], $stop - $at[$i]);
    # Drop the transcripts' lines (they hold an '=' or an arrow), so that the
    # numbers must be in the prose, which takes them from the macros.
    $section = join "\n", grep { !/[=→]|^fleet memory:/ } split /\n/, $section;
    for my $want (@{ $key_numbers{$n} }) {
        # Not the tail of a longer number (1TB inside 1.1TB), and a single
        # GPU not the head of a plural.
        my $tail = $want =~ /GPU$/ ? '(?!s)' : '';
        ok($section =~ /(?<![\d.,])${\ spaced($want)}$tail/,
           "solutions: Exercise $n prints $want");
    }
}

# The book numbers the exercises as the solutions volume names them.
my $book_pdf = "$root/build/book.pdf";
ok(-s $book_pdf, 'build/book.pdf exists');
my $book = -s $book_pdf ? pdf_characters($book_pdf) // '' : '';
(my $flat_book = $book) =~ s/\s+//g;
for my $i (0 .. $#titles) {
    my $n = $exercises[$i] // "1." . ($i + 1);
    (my $title = $titles[$i]) =~ s/\s+//g;
    $title =~ s/\\[a-zA-Z]+\{?|[{}~]//g;
    ok(index($flat_book, "$n$title") >= 0, "book: exercise $n is '$titles[$i]'");
}

done_testing();
