#!/usr/bin/perl
# The style of everything fleet prints for a person, for every subcommand and
# a spread of inputs (one GPU, one layer, a small model, the book's runs):
#   - a count agrees with its noun: never "1 GPUs", "1 layers", "1 GPU fit";
#   - a time is in a unit one reads: never "3.11e0 s", "0.00161 s" or
#     "0.000036 days";
#   - whole numbers of 1,000 and more are grouped by commas, in the
#     derivations and in the LaTeX macros alike.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use Test::More;

my $fleet = root() . '/build/bin/fleet';
ok(-x $fleet, 'build/bin/fleet is built') or BAIL_OUT('no fleet');

my @runs = (
    [qw(memory)],
    [qw(memory --params 1e9 --gpus 1)],
    [qw(memory --params 4e9 --gpus 8)],
    [qw(memory --params 405e9 --gpus 16384 --gpu h200)],
    [qw(memory --params 12.5e9 --zero 3 --dp 1)],
    [qw(memory --params 12.5e9 --zero 3 --dp 128)],
    [qw(compute)],
    [qw(compute --gpus 1 --days 1)],
    [qw(compute --params 12.5e9 --tokens 16384 --gpus 1)],
    [qw(compute --params 1e6 --tokens 1e6 --gpus 8 --days 30)],
    [qw(compute --gpus 1024 --usd-per-gpu-hour 2 --days 30)],
    [qw(step)],
    [qw(step --gpus 8 --tp 8 --dp 1 --pp 1)],
    [qw(step --params 1e9 --tokens 1e9 --gpus 1 --tp 1 --dp 1 --pp 1
        --layers 1 --batch-tokens 4096)],
    [qw(step --tp 8 --pp 8 --dp 16 --zero 1 --micro-batch-tokens 4096)],
    [qw(tp)],
    [qw(tp --tp 2 --layers 1 --micro-batch 1)],
    [qw(tp --tp 16 --link nic)],
    [qw(activations)],
    [qw(activations --layers 1 --tp 1 --pp 1 --dp 1 --micro-batch 1)],
    [qw(activations --tp 8 --sequence-parallel --pp 8 --micro-batches 32
        --recompute selective)],
    [qw(pipeline --pp 1 --micro-batches 1)],
    [qw(pipeline --pp 2 --micro-batches 1)],
    [qw(pipeline --pp 8 --micro-batches 32 --schedule interleaved --chunks 2)],
    [qw(pipeline --pp 2 --micro-batches 2 --schedule interleaved --chunks 2)],
    [qw(layout --top 3)],
    [qw(layout --gpus 1 --params 1e8 --layers 4 --hidden 1024 --heads 16
        --top 1)],
    [qw(layout --gpus 8 --params 1e9 --layers 1 --hidden 2048 --heads 16
        --top 2)],
);

my $nouns = qr/GPUs|nodes|layers|stages|micro-batches|sequences|chunks|days
               |ranks|tokens|layouts|steps|units|hours/x;
for my $args (@runs) {
    my ($status, $out, $err) = run($fleet, @$args);
    is($status, 0, "fleet @$args runs") or diag($err);
    # A count of one with a plural noun, or a plural verb.
    my @bad = $out =~ /(?<![\d.,])(1 (?:[\w-]+ )?(?:$nouns))\b/g;
    push @bad, $out =~ /(?<![\d.,])(1 GPU fit)\b/g;
    ok(!@bad, "fleet @$args: nouns agree with counts")
        or diag(join "\n", @bad);
    # Seconds in scientific notation below ten thousand (3.11e0 s), seconds
    # that are a fraction of a millisecond or more written as 0.00x s, and a
    # time shorter than a day written in days.
    my @times;
    while ($out =~ /(\d+(?:\.\d+)?)e(-?\d+) s\b/g) {
        push @times, "$1e$2 s" if $2 < 4;
    }
    push @times, $out =~ /(?<![\d.])(0\.00\d* s)\b/g;
    push @times, $out =~ /(?<![\d.,])(0\.\d+ days)\b/g;
    ok(!@times, "fleet @$args: times in a unit one reads")
        or diag(join "\n", @times);
    # Whole numbers of four or more digits, not inside a name (H100, TP8),
    # an exponent, a decimal fraction or a grouped number.
    my @ungrouped =
        $out =~ /(?<![\w.,\/^-])(\d{4,})(?![\w.,])/g;
    ok(!@ungrouped, "fleet @$args: numbers of 1,000 and more are grouped")
        or diag(join "\n", @ungrouped);
    # The same run's LaTeX macros: grouped likewise (exponents aside).
    my (undef, $tex) = run($fleet, @$args, '--latex', 'Style');
    (my $values = $tex) =~ s/\^\{-?\d+\}//g;
    my @bare = $values =~ /\{(?:[^{}]*[^\w{}.,])?(\d{4,})(?![\d.,])[^{}]*\}\n/g;
    ok(!@bare, "fleet @$args --latex: numbers of 1,000 and more are grouped")
        or diag(join "\n", @bare);
}

# The macros the planner's run scripts write (code/runs/01 to 05), by fleet or
# by awk: whole numbers of 1,000 and more grouped there too.
my $root = root();
for my $script (glob "$root/code/runs/0[1-5]-*.sh") {
    my $code = slurp($script);
    my %files = map { $_ => 1 } $code =~ m{"\$numbers/([\w.-]+\.tex)"}g;
    for my $file (sort keys %files) {
        my $tex = slurp("$root/build/numbers/$file") // '';
        (my $values = $tex) =~ s/\^\{-?\d+\}//g;
        my @bare = $values =~ /\{(?:[^{}]*[^\w{}.,])?(\d{4,})(?![\d.,])[^{}]*\}\n/g;
        ok(!@bare, "build/numbers/$file: numbers of 1,000 and more are grouped")
            or diag(join "\n", @bare);
    }
}

# The rules are the helpers' rules: a crash of the printer on an input whose
# arithmetic has nothing to report (TP1 has no all-reduce) is refused with a
# one-line error instead.
my ($s, $o, $e) = run($fleet, qw(tp --tp 1));
is($s, 2, 'fleet tp --tp 1 is refused, not a crash');
like($e, qr/^fleet tp: --tp 1 [^\n]*\n\z/, 'with one line naming --tp');

done_testing();
