#!/usr/bin/perl
# The measurements of this machine (appendix "Measuring this machine"):
# build/machine.json, which the build writes once, and the programs that read
# it (minigpt, matmul-bench and fleet compute, all with --machine FILE).
#
# What is checked is structure, never speed: every figure of the file is
# there, positive and finite; each spread is a pair of non-negative numbers
# with the median between them; minigpt, matmul-bench and fleet report
# exactly the file's peak, so that no two chapters can divide by different
# peaks; the book's macros for the peak agree, and the benchmark's share of
# it prints with the same digits in its transcript; every run script that
# trains or times minigpt passes --machine; and a missing, garbled or
# incomplete file is refused with one line and status 2.
#
# Run after `make`:  prove -v tests/92-machine.t
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use File::Temp qw(tempdir);
use JSON::PP ();
use Test::More;

my $root    = root();
my $file    = "$root/build/machine.json";
my $machine = "$root/build/bin/machine";
my $minigpt = "$root/build/bin/minigpt";
my $bench   = "$root/build/bin/matmul-bench";
my $fleet   = "$root/build/bin/fleet";
my $tmp     = tempdir(CLEANUP => 1);
for my $bin ($machine, $minigpt, $bench, $fleet) {
    ok(-x $bin, "$bin is built") or BAIL_OUT("no $bin: run make first");
}
ok(-s $file, 'build/machine.json was written') or BAIL_OUT('run make first');

my @figures = qw(peak_flops_per_core gemm_flops_per_core
                 memcpy_bytes_per_second first_touch_bytes_per_second
                 p2p_latency_s p2p_bytes_per_second);

# The checks every machine file must pass, whoever wrote it.
sub check_machine_file {
    my ($path, $what) = @_;
    my $text = slurp($path) // '';
    my $m = eval { JSON::PP::decode_json($text) };
    ok(ref $m eq 'HASH', "$what: is one JSON object") or return undef;
    like($m->{cpu} // '', qr/\S/, "$what: names the processor");
    for my $key (qw(cores repeats ranks)) {
        ok(defined $m->{$key} && $m->{$key} =~ /^\d+$/ && $m->{$key} >= 1,
           "$what: $key is a whole number, at least 1");
    }
    ok(JSON::PP::is_bool($m->{pinned}), "$what: pinned is true or false");
    for my $key (@figures) {
        my $x = $m->{$key};
        ok(defined $x && !ref $x && $x > 0 && $x < 9**9**9,
           "$what: $key is positive and finite");
        my $s = $m->{"${key}_spread"};
        ok(ref $s eq 'ARRAY' && @$s == 2, "$what: ${key}_spread is a pair")
            or next;
        ok($s->[0] >= 0 && $s->[1] >= 0, "$what: ... of non-negative numbers");
        ok($s->[0] <= $x && $x <= $s->[1],
           "$what: ... with the median between them");
        is($m->{"${key}_low"}, $s->[0], "$what: ${key}_low is the pair's first");
        is($m->{"${key}_high"}, $s->[1], "$what: ${key}_high is its second");
    }
    ok($m->{complete}, "$what: ends with \"complete\": true");
    return $m;
}

my $m = check_machine_file($file, 'build/machine.json');
SKIP: {
    skip 'the machine has at least two cores', 1 if ($m->{cores} // 0) < 2;
    ok($m->{pinned}, 'build/machine.json: with two cores, the ranks were pinned');
}

# --------------------------------------------------- the program itself ----
{
    my ($status, $out) = run($machine, '--help');
    is($status, 0, 'machine --help exits 0');
    like($out, qr/--output.*--latex-output/s, '... and lists its flags');
    my ($s, $o, $e) = run(mpiexec(2, $machine, '--repeats', 3,
                                  '--seconds', '0.01', '--memcpy-bytes', 1048576,
                                  '--bandwidth-bytes', 65536,
                                  '--output', "$tmp/m.json", '--latex', 'Test',
                                  '--latex-output', "$tmp/m.tex",
                                  '--transcript', "$tmp/m.txt"));
    is($s, 0, 'a quick run of machine on 2 ranks exits 0') or diag($e);
    my $q = check_machine_file("$tmp/m.json", 'a quick run');
    is($q->{repeats}, 3, 'a quick run: the repeats asked for') if $q;
    my %tex = %{ read_macros("$tmp/m.tex") };
    for my $name (qw(Cpu Cores PeakFlops GemmFlops MemcpyGBs LatencyUs
                     BandwidthGBs PeakFlopsLow PeakFlopsHigh)) {
        ok(defined $tex{"Test$name"}, "a quick run: macro \\Test$name");
    }
    like(slurp("$tmp/m.txt") // '', qr/peak, one core.*\n.*gemm/,
         'a quick run: the readable table');
    for my $bad (['with one rank', qr/needs at least 2 ranks/, [1]],
                 ['--latex without --latex-output', qr/--latex-output/,
                  [2, '--latex', 'X']],
                 ['a prefix that is not letters', qr/--latex: .*letters/,
                  [2, '--latex', 'X1', '--latex-output', "$tmp/x.tex"]],
                 ['an unwritable --output', qr/--output: cannot write/,
                  [2, '--output', "$tmp/no/such/dir/m.json"]]) {
        my ($name, $why, $ranks_and_flags) = @$bad;
        my ($ranks, @flags) = @$ranks_and_flags;
        refused("machine $name", qr/^machine: .*$why/,
                mpiexec($ranks, $machine, @flags));
    }
}

# ------------------------------------------------ one peak for the book ----
# minigpt reports exactly the file's peak: the same double, not a
# re-measurement and not a rounding of it.
my @tiny = qw(--layers 1 --hidden 16 --heads 2 --seq 8 --batch 2 --vocab 16
              --steps 3 --eval-every 1000 --quiet --json);
{
    my ($status, $out, $err) = run($minigpt, @tiny, '--machine', $file);
    is($status, 0, 'minigpt --machine runs') or diag($err);
    my $r = eval { JSON::PP::decode_json($out) } // {};
    ok(defined $r->{peak_flops} && $r->{peak_flops} == $m->{peak_flops_per_core},
       'minigpt --machine: its peak is exactly the file\'s');
    is($r->{peak_from}, $file, '... and it says where the peak came from');
    ok(defined $r->{gemm_flops} && $r->{gemm_flops} == $m->{gemm_flops_per_core},
       '... and the GEMM rate is the file\'s too');
    ok(defined $r->{mfu} && abs($r->{mfu} - $r->{achieved_flops} / $r->{peak_flops})
           <= 1e-12 * $r->{mfu}, '... and the MFU divides by it');
    ok($r->{cores} >= 1, '... and it reports the core count');
    cmp_ok($r->{tokens_per_second_low}, '<=', $r->{tokens_per_second},
           'minigpt: the median speed is not below its spread ...');
    cmp_ok($r->{tokens_per_second}, '<=', $r->{tokens_per_second_high},
           '... nor above it');
    is($r->{warmup_steps} + $r->{timed_steps}, 3,
       'minigpt: warm-up and timed steps make up the run');
    ($status, $out) = run($minigpt, @tiny);
    $r = eval { JSON::PP::decode_json($out) } // {};
    is($r->{peak_from}, 'measured in this run',
       'minigpt without --machine measures the peak itself, and says so');
}
{
    my ($status, $out, $err) = run($bench, qw(--batch 1 --seq 8 --hidden 16
                                   --vocab 16 --seconds 0.01 --repeats 3
                                   --json --machine), $file);
    is($status, 0, 'matmul-bench --machine runs') or diag($err);
    my $r = eval { JSON::PP::decode_json($out) } // {};
    ok(defined $r->{peak_flops} && $r->{peak_flops} == $m->{peak_flops_per_core},
       'matmul-bench --machine: its peak is exactly the file\'s');
    is($r->{repeats}, 3, 'matmul-bench: the repeats asked for');
}
{
    my ($status, $out, $err) = run($fleet, qw(compute --gpus 2 --json
                                   --machine), $file);
    is($status, 0, 'fleet compute --machine runs') or diag($err);
    my $r = eval { JSON::PP::decode_json($out) } // {};
    ok(defined $r->{peak_flops} && $r->{peak_flops} == $m->{peak_flops_per_core},
       'fleet compute --machine: a device is one core, at the file\'s peak');
    refused('fleet compute: --gpu and --machine together', qr/--gpu.*--machine|--machine.*--gpu/,
            $fleet, qw(compute --gpu h100 --machine), $file);
}

# The book's macros: the chapter's peak and the appendix's are one number.
SKIP: {
    my $train = slurp("$root/build/numbers/06-train.tex");
    my $own = slurp("$root/build/numbers/machine.tex");
    skip 'chapter 6 has not run (make)', 2 unless defined $train && defined $own;
    my $t = read_macros("$root/build/numbers/06-train.tex")->{TrainPeakFlops};
    my $p = read_macros("$root/build/numbers/machine.tex")->{MachinePeakFlops};
    ok(defined $p, 'build/numbers/machine.tex defines \\MachinePeakFlops');
    is($t, $p, 'chapter 6\'s \\TrainPeakFlops is the machine\'s \\MachinePeakFlops');
}

# The benchmark says which kernel OpenBLAS chose, and the text says it can
# reach at most a part of the peak exactly when its vectors are narrower
# than the core's.
SKIP: {
    my $bench = slurp("$root/build/numbers/06-bench.tex");
    my $mfu = slurp("$root/build/numbers/06-mfu.tex");
    skip 'chapter 6 has not run (make)', 3 unless defined $bench && defined $mfu;
    my %b = %{ read_macros("$root/build/numbers/06-bench.tex") };
    $mfu =~ s/\n(?!\\newcommand|\z)/ /g;      # a macro may span lines
    my %s = $mfu =~ /^\\newcommand\{\\(\w+)\}\{(.*)\}$/mg;
    ok(length($b{BenchBlasCore} // ''), 'the benchmark names the kernel OpenBLAS chose');
    my ($blas, $core) = map { ($_ // '0') =~ s/,//gr } @b{qw(BenchBlasVectorBits BenchCoreVectorBits)};
    like($s{BenchKernelSentence} // '',
         $blas > 0 && $core > $blas ? qr/at most about/ : qr/^(?!.*at most about)/s,
         'the text calls the kernel narrower than the core exactly when it is');
    my %tr = %{ read_macros("$root/build/numbers/06-train.tex") };
    my ($mm) = printed_number($tr{TrainMatmulFlops} // '');
    my ($pk) = printed_number($tr{TrainPeakFlops} // '');
    is($s{TrainMatmulShareOfPeak}, sprintf('%.0f\\,\\%%', 100 * ($mm // 0) / ($pk || 1)),
       'the matrix multiplies\' share of the peak is the ratio of the printed rates');
}

# The benchmark's transcript and the book's sentence give its fastest
# product's share of the peak with the same digits.
SKIP: {
    my $transcript = slurp("$root/build/transcripts/06-bench.txt");
    my $bench = slurp("$root/build/numbers/06-bench.tex");
    skip 'chapter 6 has not run (make)', 1
        unless defined $transcript && defined $bench;
    my ($printed) = $transcript =~ /^fastest product .* = (\S+) %/m;
    my %b = %{ read_macros("$root/build/numbers/06-bench.tex") };
    is($b{BenchBestFractionOfPeak}, ($printed // 'no share') . '\\,\\%',
       'the fastest product\'s share of the peak: the transcript\'s digits');
}

# Every run script that trains or times minigpt, or times the benchmark or
# the collectives, reads the machine's figures from the file.
for my $script (glob("$root/code/runs/*.sh"), glob("$root/solutions/*.sh")) {
    (my $text = slurp($script) // '') =~ s/\\\n\s*/ /g;
    my $name = $script =~ s{^\Q$root\E/}{}r;
    for my $line (split /\n/, $text) {
        next unless $line =~ /\$bin\/(minigpt|matmul-bench|allreduce)\b(?!-)/
                 || $line =~ /\$minigpt\b/;
        next if $line =~ /--(verify|gradcheck|sample|help|print-mesh)\b/
             || $line =~ /^\s*#/;
        next if $line =~ /^\s*minigpt(64)?=/;
        my $flagged = $line =~ /--machine\b/
                   || ($line =~ /\$minigpt\b/
                       && $text =~ /^\s*minigpt="[^"]*--machine/m)
                   || ($line =~ /\$rates\b/
                       && $text =~ /^\s*(if .*then )?rates="--machine/m);
        ok($flagged, "$name: passes --machine: " . substr($line =~ s/^\s+//r, 0, 60));
    }
}

# ------------------------------------------------------------ bad files ----
my @bad = (
    ['a missing file', "$tmp/none.json"],
    ['a directory', $tmp],
    ['garbled text', 'garbled', "not json at all\n"],
    ['a file cut short', 'short', substr(slurp($file) // '', 0, 120)],
    ['a peak that is not a number', 'text',
     "{\n  \"peak_flops_per_core\": \"fast\",\n  \"complete\": true\n}\n"],
    ['a negative peak', 'negative',
     "{\n  \"peak_flops_per_core\": -1e11,\n  \"complete\": true\n}\n"],
    ['no peak at all', 'nopeak', "{\n  \"cores\": 2,\n  \"complete\": true\n}\n"],
);
for my $case (@bad) {
    my ($what, $path, $body) = @$case;
    if (defined $body) {
        $path = "$tmp/$path.json";
        open(my $fh, '>', $path) or die;
        print $fh $body;
        close $fh;
    }
    for my $command ([$minigpt, @tiny], [$bench, '--json'],
                     [$fleet, 'compute', '--json']) {
        my $who = $command->[0] =~ s{.*/}{}r;
        $who .= ' compute' if $who eq 'fleet';
        refused("$who --machine with $what", '--machine',
                @$command, '--machine', $path);
    }
}

done_testing();
