#!/usr/bin/perl
# Chapter 7: the allreduce benchmark and the ring it measures.
#
# On 1 to 4 ranks and tiny buffers: every element of every collective is
# right, including buffers that do not divide by the number of ranks and
# buffers shorter than it (empty chunks); the sweep holds every operation,
# implementation and power-of-two size it was asked for and nothing else;
# algbw is size over time and busbw is algbw times the fraction each rank
# sends, 2(n-1)/n for all-reduce and (n-1)/n for its halves; the memcpy
# ceiling and the first-touch rate are measured; every time is the median of
# --repeats batches, between the fastest and the slowest; the transcript
# names the cores, the ranks that share them, whether they are pinned, and
# warns when ranks outnumber cores; the other outputs (--csv, --data,
# --transcript, --latex) agree with --json. Bad input is refused once, not
# once per rank. Then the book's own runs: its transcripts print the core
# count, and on a machine of fewer than four cores no four-rank time is shown.
# Finally the benchmark is shown to catch a broken ring: built against a
# ring.c that forgets to add, it counts wrong elements and exits 1, timed on
# two ranks and with --check (the ring lab's grader: times nothing, prints
# dashes for the times, refuses --json) on three.
#
# No timing is asserted: the machine may be busy, and four ranks share two
# cores. Run after `make`:  prove -v tests/07-allreduce.t
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use File::Temp qw(tempdir);
use JSON::PP ();
use Test::More;

my $root = root();
my $bin = "$root/build/bin/allreduce";
ok(-x $bin, 'build/bin/allreduce is built') or BAIL_OUT('no allreduce: run make');

my @quick = qw(--seconds 0.001 --warmup 1 --repeats 3);
# A memory-copy ceiling handed in, as the book's runs hand in the one in
# build/machine.json: the run then skips the half second of copying that
# measures it, while its other ranks wait. The sweeps on 1 and 2 ranks
# measure it.
my @ceiling = qw(--memcpy 10);
# The first-touch rate too, from the machine file that make measured once:
# a launch that measures it maps and writes 64 MiB three times, seconds on a
# virtual machine, while its other ranks poll. The sweeps that measure the
# ceiling measure the first touch as well.
my $machine = "$root/build/machine.json";
ok(-s $machine, 'build/machine.json is measured') or BAIL_OUT('run make');
my ($touch_rate) = (slurp($machine) // '') =~ /"first_touch_bytes_per_second": ([0-9.eE+-]+)/;
push @ceiling, '--machine', $machine;
chomp(my $cores = `nproc`);
my %factor = (
    allreduce      => sub { 2 * ($_[0] - 1) / $_[0] },
    reduce_scatter => sub { ($_[0] - 1) / $_[0] },
    all_gather     => sub { ($_[0] - 1) / $_[0] },
);
my @ops = qw(allreduce reduce_scatter all_gather);

# Rows of a --json run, each with the raw text of its numbers kept beside
# the decoded values (raw_algbw, ...), so that a relation between printed
# numbers can be checked to the digits they were printed with.
sub rows_of {
    my ($out) = @_;
    my $rows = eval { JSON::PP::decode_json($out) };
    return undef unless ref $rows eq 'ARRAY';
    my @raw = $out =~ /^\s*\{(.*)\},?\s*$/mg;
    return undef unless @raw == @$rows;
    for my $i (0 .. $#raw) {
        $rows->[$i]{"raw_$1"} = $2 while $raw[$i] =~ /"(\w+)": ([-+.\deE]+)/g;
    }
    return $rows;
}

# The relative rounding error a number printed with these digits may carry:
# half a unit in its last significant digit, over its smallest mantissa.
sub rounding {
    my ($text) = @_;
    (my $m = $text) =~ s/[eE].*//;
    $m =~ s/^[-+]?0*\.?0*//;
    $m =~ s/\.//;
    my $digits = length($m) || 1;
    return 0.5 * 10**(1 - $digits);
}

# got == want within what the printing of both allows (never looser than
# the printing needs: 1e-9 once both are printed with eleven digits or
# more). Returns '' when it holds, else what went wrong.
sub relation {
    my ($got, $raw_got, $want, $raw_want) = @_;
    my $rtol = rounding($raw_got) + rounding($raw_want);
    $rtol = 1e-9 if $rtol < 1e-9;
    return abs($got - $want) <= $rtol * abs($want)
         ? '' : "got $got, want $want (relative tolerance $rtol)";
}

# Powers of two from 4 up, within [min, max].
sub sizes {
    my ($min, $max) = @_;
    my @s;
    for (my $b = 4; $b <= $max; $b *= 2) { push @s, $b if $b >= $min }
    return @s;
}

# One sweep: exit 0, nothing wrong, exactly the rows asked for, and the
# relations that define the columns.
sub sweep_ok {
    my (%a) = @_;
    my ($n, $min, $max, $op) = @a{qw(n min max op)};
    my @args = (@quick, '--min-bytes', $min, '--max-bytes', $max,
                defined $op ? ('--op', $op) : (),
                $a{measure_memcpy} ? () : @ceiling);
    my $name = "$n rank" . ($n > 1 ? 's' : '') . ", $min..$max bytes"
             . (defined $op ? ", --op $op" : '');
    my ($status, $out, $err) = run(mpiexec($n, $bin, @args, '--json'));
    is($status, 0, "$name: exit 0") or diag $err;
    my $rows = rows_of($out);
    ok($rows, "$name: --json is an array of rows, one per line") or return;
    my @memcpy = grep { $_->{op} eq 'memcpy' } @$rows;
    my @touch = grep { $_->{op} eq 'first_touch' } @$rows;
    if (!$a{measure_memcpy} && @touch) {
        close_to($touch[0]{algbw}, $touch_rate / 1e9, 1e-5,  # printed to 6 digits
                 "$name: the first-touch row is the machine file's");
    }
    my @coll = grep { $_->{op} ne 'memcpy' && $_->{op} ne 'first_touch' } @$rows;

    my (%want, %got);
    for my $o (defined $op && $op ne 'all' ? ($op) : @ops) {
        $want{"$o ring $_"}++, $want{"$o mpi $_"}++ for sizes($min, $max);
    }
    $got{"$_->{op} $_->{impl} $_->{size}"}++ for @coll;
    is_deeply(\%got, \%want,
              "$name: every operation x implementation x size, once each");

    my @bad = grep { $_->{wrong} != 0 } @coll;
    is(scalar @bad, 0, "$name: no wrong element in any row")
      or diag(join "\n", map { "$_->{op} $_->{impl} $_->{size}: $_->{wrong} wrong" } @bad);

    my ($count_ok, $time_ok) = (1, 1);
    for my $r (@coll) {
        $count_ok &&= $r->{count} == $r->{size} / 4;
        $time_ok &&= $r->{time_s} > 0;
    }
    ok($count_ok, "$name: count = size / 4 (float32) in every row");
    ok($time_ok, "$name: every time is positive");
    my @order = grep { !($_->{time_min_s} <= $_->{time_s}
                         && $_->{time_s} <= $_->{time_max_s}) } @coll;
    is(scalar @order, 0, "$name: fastest <= median <= slowest in every row")
      or diag(join "\n", map { "$_->{op} $_->{impl} $_->{size}" } @order);
    is(scalar(grep { $_->{repeats} != 3 } @coll), 0,
       "$name: every row is the median of the 3 --repeats asked for");
    is(scalar(grep { !defined $_->{faults} || $_->{faults} < 0 } @coll), 0,
       "$name: page faults per call are counted, never negative");
    my (@algbw, @busbw);
    for my $r (@coll) {
        my $what = "$r->{op} $r->{impl} $r->{size}";
        my $a = relation($r->{algbw}, $r->{raw_algbw},
                         $r->{size} / $r->{time_s} / 1e9, $r->{raw_time_s});
        push @algbw, "$what: $a" if $a;
        my $b = relation($r->{busbw}, $r->{raw_busbw},
                         $r->{algbw} * $factor{ $r->{op} }->($n), $r->{raw_algbw});
        push @busbw, "$what: $b" if $b;
    }
    ok(!@algbw, "$name: algbw = size / time_s / 1e9 in every row")
      or diag(join "\n", @algbw);
    ok(!@busbw, "$name: busbw = algbw x 2(n-1)/n for allreduce, x (n-1)/n "
                . "for reduce_scatter and all_gather, in every row")
      or diag(join "\n", @busbw);
    is(scalar @memcpy, 1, "$name: one memcpy row");
    if (@memcpy) {
        my $m = $memcpy[0];
        ok($m->{algbw} > 0 && $m->{busbw} == $m->{algbw},
           "$name: memcpy bandwidth $m->{algbw} GB/s is positive");
        is($m->{wrong}, 0, "$name: memcpy row counts nothing wrong");
        is($m->{size}, 64 << 20,
           "$name: memcpy copies 64 MiB, whatever the sweep, to measure memory");
        is($rows->[-1]{op}, 'memcpy', "$name: the memcpy row comes last");
    }
    is(scalar @touch, 1, "$name: one first_touch row");
    if (@touch) {
        ok($touch[0]{algbw} > 0, "$name: fresh pages are touched at a positive rate");
        is($rows->[-2]{op}, 'first_touch', "$name: ... in the row before memcpy");
    }
    return $rows;
}

# --------------------------------------------------- right on 1 to 4 ranks --
sweep_ok(n => 1, min => 8, max => 65536, measure_memcpy => 1);
sweep_ok(n => 2, min => 8, max => 65536, measure_memcpy => 1);
# Three ranks: no power-of-two buffer divides by three; 4 and 8 bytes leave
# two and one chunks empty. (Up to 128 bytes: larger buffers cut into three
# uneven chunks as 16 to 128 bytes do, and every row on more ranks than
# cores costs a wait for the scheduler at each step of the ring.)
sweep_ok(n => 3, min => 4, max => 128);
# Four ranks: 4 bytes is one float and three empty chunks, 8 bytes two, 16
# bytes one float each, 64 bytes four. (Four ranks share two cores here, so
# every step of the ring waits for the scheduler: the sweep stays short.)
sweep_ok(n => 4, min => 4, max => 64);
# --op restricts the sweep; a --min-bytes between powers of two starts at
# the next one.
sweep_ok(n => 2, min => 8, max => 4096, op => 'allreduce');
sweep_ok(n => 3, min => 5, max => 100, op => 'reduce_scatter');
sweep_ok(n => 2, min => 4, max => 64, op => 'all_gather');
sweep_ok(n => 2, min => 4, max => 64, op => 'all');

# ----------------------------------------------------------- other outputs --
{
    my $dir = tempdir(CLEANUP => 1);
    my @args = (@quick, @ceiling, qw(--min-bytes 16 --max-bytes 256));
    my ($status, $out, $err) = run(mpiexec(2, $bin, @args, '--json', '--output', "$dir/rows.json",
                                      '--data', "$dir/rows.csv",
                                      '--transcript', "$dir/table.txt"));
    is($status, 0, '--json --output --data --transcript: exit 0') or diag $err;
    is($out, '', '--output: nothing on stdout');
    my $json = slurp("$dir/rows.json") // die "no --output file";
    my $rows = rows_of($json);
    ok($rows, '--output holds the --json rows');
    open my $csv, '<', "$dir/rows.csv" or die "no --data file: $!";
    chomp(my @lines = <$csv>);
    is(shift @lines, 'op,impl,size,count,time_s,algbw,busbw,wrong,time_min_s,'
       . 'time_max_s,repeats,faults', '--data: CSV with its header');
    is(scalar @lines, scalar @$rows, '--data: one CSV line per JSON row');
    my @same = grep {
        my @f = split /,/, $lines[$_];
        my $r = $rows->[$_];
        $f[0] eq $r->{op} && $f[1] eq $r->{impl} && $f[2] == $r->{size}
          && $f[3] == $r->{count} && $f[7] == $r->{wrong}
    } 0 .. $#lines;
    is(scalar @same, scalar @lines, '--data: the same rows, in the same order');
    my $table = slurp("$dir/table.txt") // die "no --transcript file";
    like($table, qr/\A# 2 ranks, float32 sum, on a host of \Q$cores\E cores? \(2 ranks there\), (each pinned to one core|not pinned)\n/,
         "--transcript: the header names the ranks, the $cores cores and the pinning");
    like($table, qr/^# time: median of 3 timed batches after 1 warm-up call; spread/m,
         '--transcript: the header says how the times were taken');
    like($table, qr/^# memory copy [\d.]+ GB\/s on one core \(memcpy\); fresh pages first touched at [\d.]+ GB\/s$/m,
         '--transcript: the header gives the memcpy ceiling and the first-touch rate');
    if ($cores >= 2) {
        unlike($table, qr/OVERSUBSCRIBED/, "--transcript: 2 ranks on $cores cores are not oversubscribed");
    }
    for my $op (@ops) {
        like($table, qr/^# \Q$op\E\s+ring\s+mpi$/m, "--transcript: a $op table");
    }
    my @table_rows = $table =~ /^\s+(\d+)\s+\d+\s+[\d.]+\s+\d+\s+[\d.]+\s+[\d.]+\s+(\d+)\s+[\d.]+\s+\d+\s+[\d.]+\s+[\d.]+\s+(\d+)$/mg;
    is(scalar @table_rows, 3 * 3 * 5, '--transcript: five sizes per operation, ring beside mpi, each with its spread');

    ($status, $out, $err) = run(mpiexec(2, $bin, @args, '--csv'));
    is($status, 0, '--csv: exit 0');
    like($out, qr/\Aop,impl,size,count,time_s,algbw,busbw,wrong,time_min_s,time_max_s,repeats,faults\n/,
         '--csv: the header');
    is(scalar(() = $out =~ /\n/g), 1 + 3 * 2 * 5 + 2, '--csv: header, 30 rows, first_touch and memcpy');

    ($status, $out, $err) = run(mpiexec(2, $bin, @args, '--latex', 'Test'));
    is($status, 0, '--latex: exit 0');
    like($out, qr/^\\newcommand\{\\TestRanks\}\{2\}$/m, '--latex: \TestRanks is 2');
    like($out, qr/^\\newcommand\{\\TestWrong\}\{0\}$/m, '--latex: \TestWrong is 0');
    like($out, qr/^\\newcommand\{\\TestMemcpyGbps\}\{[\d.]+\}$/m, '--latex: the memcpy bandwidth');
    like($out, qr/^\\newcommand\{\\TestCores\}\{\Q$cores\E\}$/m, "--latex: \\TestCores is nproc, $cores");
    like($out, qr/^\\newcommand\{\\TestRanksHere\}\{2\}$/m, '--latex: two ranks on this host');
    like($out, qr/^\\newcommand\{\\TestRepeats\}\{3\}$/m, '--latex: the repeats');
    my @bad = grep { !/^\\newcommand\{\\Test[A-Za-z]+\}\{.*\}$/ } split /\n/, $out;
    is_deeply(\@bad, [], '--latex: only \newcommand lines, every name prefixed');

    ($status, $out, $err) = run(mpiexec(2, $bin, @args));
    is($status, 0, 'the table: exit 0');
    like($out, qr/^# allreduce\s+ring\s+mpi$/m, 'the table on stdout by default');
    like($err, qr/^allreduce: allreduce 16 bytes done$/m, 'progress on stderr');
}

# ------------------------------------------------------------- bad input --
my @bad = (
    ['--op', '--op', 'bogus'],
    ['--op', '--op', 'Allreduce'],
    ['--min-bytes', '--min-bytes', 128, '--max-bytes', 64],
    ['--min-bytes', '--min-bytes', 2],
    ['--max-bytes', '--max-bytes', 'abc'],
    ['--max-bytes', '--max-bytes', '-5'],
    ['--max-bytes', '--max-bytes', '0'],
    ['--max-bytes', '--max-bytes', '1e13'],
    ['--min-bytes', '--min-bytes', '4.5'],
    ['--warmup', '--warmup', 'x'],
    ['--warmup', '--warmup', '0.5'],
    ['--seconds', '--seconds', '0'],
    ['--seconds', '--seconds', '-1'],
    ['--repeats', '--repeats', '0'],
    ['--repeats', '--repeats', '1001'],
    ['--repeats', '--repeats', '2.5'],
    ['--memcpy', '--memcpy', '0'],
    ['--memcpy', '--memcpy', 'fast'],
    ['--machine', '--machine', '/nonexistent/machine.json'],
    ['--machine', '--machine', "$root/Makefile"],
    ['--bogus', '--bogus'],
    ['--bogus', '--bogus', 7],
);
for my $n (1, 2, 4) {
    for my $case (@bad) {
        my ($flag, @args) = @$case;
        my $name = "$n rank" . ($n > 1 ? 's' : '') . ": allreduce @args";
        my $dir = tempdir(CLEANUP => 1);
        # A small sweep, should the bad flag be let through.
        my @small = grep({ $_ eq '--max-bytes' } @args) ? () : ('--max-bytes', 64);
        refused($name, qr/^allreduce: .*\Q$flag\E/,
                mpiexec($n, $bin, @quick, @small, @args, '--json',
                        '--output', "$dir/out.json", '--data', "$dir/data.csv",
                        '--transcript', "$dir/table.txt"));
        is_deeply([files_in($dir)], [], "$name: no output file left behind");
    }
}
# A flag without its value, as the last word.
for my $n (1, 2) {
    refused("$n rank(s): --max-bytes with no value", '--max-bytes',
            mpiexec($n, $bin, '--max-bytes'));
}

# ------------------------------------------------------------------ help --
for my $n (1, 2, 4) {
    my ($status, $out, $err) = run(mpiexec($n, $bin, '--help'));
    is($status, 0, "--help on $n rank(s): exit 0");
    is(scalar(() = $out =~ /^usage: allreduce/mg), 1, "--help on $n rank(s): printed once");
    for my $flag (qw(--min-bytes --max-bytes --op --warmup --seconds --repeats --memcpy --machine --transcript
                     --data --json --csv --latex --output --help)) {
        like($out, qr/^\s+\Q$flag\E\b/m, "--help on $n rank(s): lists $flag") if $n == 1;
    }
}

# ---------------------------------------------- --memcpy and placement --
{
    # More ranks than cores: the table says so in its header. (One
    # operation is enough for the header; the sweeps above check the rest.)
    # The same run is handed a ceiling, as build/machine.json holds one,
    # which must be the one reported.
    my $n = $cores + 1;
    my $dir = tempdir(CLEANUP => 1);
    my ($status, $out, $err) = run(mpiexec($n, $bin, @quick,
        qw(--memcpy 12.5 --op allreduce --max-bytes 64), '--machine', $machine, '--transcript',
        "$dir/t.txt", '--json'));
    is($status, 0, "$n ranks on $cores cores: still correct, exit 0") or diag $err;
    my $rows = rows_of($out) // [];
    my ($copy) = grep { $_->{op} eq 'memcpy' } @$rows;
    is($copy && $copy->{algbw}, 12.5, '--memcpy 12.5: the memcpy row reports 12.5 GB/s');
    my $t = slurp("$dir/t.txt") // '';
    like($t, qr/^# \Q$n\E ranks, float32 sum, on a host of \Q$cores\E cores? \(\Q$n\E ranks there\)/,
         "$n ranks on $cores cores: the header counts both");
    like($t, qr/^# OVERSUBSCRIBED: more ranks than cores; these times measure the scheduler, not the collective$/m,
         "$n ranks on $cores cores: the header warns that the times mean nothing");
}

# ------------------------------------------------------ the book's own runs --
# What code/runs/07-data-parallel.sh left in the build: the transcripts name
# the core count; four ranks are timed only where there are four cores, and
# otherwise no four-rank table or time reaches the book.
{
    my $t2 = slurp("$root/build/transcripts/07-allreduce-2.txt");
    ok(defined $t2, 'the book\'s two-rank transcript exists (run make)');
    like($t2 // '', qr/\A# 2 ranks, float32 sum, on a host of \Q$cores\E cores? \(2 ranks there\), each pinned to one core\n/,
         "the book's two-rank transcript prints the $cores cores and the pinning");
    unlike($t2 // '', qr/OVERSUBSCRIBED/, 'the book\'s two-rank timings are not oversubscribed');
    my $short = slurp("$root/build/transcripts/07-allreduce-2-short.txt") // '';
    like($short, qr/\A# 2 ranks, float32 sum, on a host of \Q$cores\E cores?/,
         'the table the book prints keeps the header with the core count');
    my %m = %{ read_macros("$root/build/numbers/07-*.tex") };
    is($m{RingCoresHere}, $cores, 'the chapter is told the core count');
    is($m{RingPinned}, 1, 'the chapter\'s two ranks were pinned');
    my $four = -e "$root/build/transcripts/07-allreduce-4.txt";
    if ($cores >= 4) {
        is($m{RingFourTimed}, 1, "$cores cores: four ranks are timed");
        ok($four, "$cores cores: ... and their transcript is written");
        is($m{RingFourPinned}, 1, "$cores cores: ... pinned");
    } else {
        is($m{RingFourTimed}, 0, "$cores cores: four ranks are not timed");
        ok(!$four && !-e "$root/build/transcripts/07-allreduce-4-short.txt",
           "$cores cores: no four-rank transcript for the book to show");
        is($m{RingFourWrong}, 0, "$cores cores: four ranks still checked for correctness");
        my $chapter = slurp("$root/chapters/07-data-parallel.nw") // '';
        my ($untimed) = $chapter =~ /\\ifnum\\RingFourTimed=1(.*?)\\fi\n/s;
        my ($else) = ($untimed // '') =~ /\\else(.*)$/s;
        ok(defined $else, 'the chapter has a text for a machine that cannot time four ranks');
        unlike($else // '', qr/\\RingFour(?!Wrong|Predicted|Checked)\w+/,
               '... which quotes no four-rank measurement but the count of wrong elements');
    }
    # The explanation of MPICH's large sizes rests on what the run measured.
    if (($m{RingMpiCollapses} // 0) == 1) {
        my ($faults) = printed_number($m{RingMpiFaultsLargest});
        my ($pages) = printed_number($m{RingPagesLargest});
        cmp_ok($faults // 0, '>=', ($pages // 1e99) / 4,
               'MPICH falls behind: it faults in at least a quarter of the buffer\'s pages a call');
        my ($ring) = printed_number($m{RingRingFaultsLargest});
        cmp_ok($ring // 1e99, '<=', 1, '... and the ring almost none');
        my ($gain) = printed_number($m{RingHeapGain});
        cmp_ok($gain // 0, '>=', 3, '... and keeping the heap makes it at least 3 times faster');
    }
    # The sentences quote the measured ratios, read again from the CSV.
    my (%bw, %lo, %hi, %t);
    if (open my $csv, '<', "$root/build/data/07-allreduce-2.csv") {
        <$csv>;
        while (<$csv>) {
            chomp;
            my @f = split /,/;
            next unless $f[0] eq 'allreduce';
            ($bw{$f[1]}{$f[2]}, $t{$f[1]}{$f[2]}) = ($f[6], $f[4]);
            ($lo{$f[1]}{$f[2]}, $hi{$f[1]}{$f[2]}) = ($f[8], $f[9]);
        }
    }
    my @sizes = sort { $a <=> $b } keys %{ $bw{ring} // {} };
    ok(@sizes > 0, 'the two-rank sweep\'s CSV is there');
    if (($m{RingMpiCollapses} // 0) == 1) {
        my $from = $m{RingCollapseMib} * 1048576;
        my ($factor) = sort { $a <=> $b }
            map { $bw{ring}{$_} / $bw{mpi}{$_} } grep { $_ >= $from } @sizes;
        my $want = int($factor // 0);
        like($m{RingCollapseSentence} // '', qr/at least \Q$want\E times as fast/,
             'the collapse is quoted as the smallest measured factor, rounded down');
    }
    my $rs = $sizes[0] // 0;
    my $overlap = $lo{ring}{$rs} <= $hi{mpi}{$rs} && $lo{mpi}{$rs} <= $hi{ring}{$rs};
    like($m{RingSmallSentence} // '',
         $overlap ? qr/cannot be told apart/ : qr/do not overlap/,
         'small buffers: the two are told apart exactly when their spreads do not overlap');
    my ($large) = sort { $b <=> $a } map { $bw{ring}{$_} } grep { $_ >= 16777216 } @sizes;
    my $copy = do {
        my $c;
        if (open my $csv, '<', "$root/build/data/07-allreduce-2.csv") {
            while (<$csv>) { my @f = split /,/; $c = $f[6] if $f[0] eq 'memcpy' }
        }
        $c;
    };
    is($m{RingLargeBestOfMemcpy}, sprintf('%.2g\\,\\%%', 100 * ($large // 0) / ($copy || 1)),
       'the drill quotes the best ring row of 16 MiB and more against the copy');
    my ($small) = sort { $a <=> $b } map { $bw{ring}{$_} } grep { $_ >= 16777216 } @sizes;
    my ($lo_pc, $hi_pc) = map { sprintf('%.2g', 100 * ($_ // 0) / ($copy || 1)) } $small, $large;
    my $span = $lo_pc eq $hi_pc ? "$hi_pc\\,\\%" : "$lo_pc to $hi_pc\\,\\%";
    like($m{RingMeansBandwidth} // '', qr/16~MiB and more at (only )?\Q$span\E of the rate/,
         'What it means quotes the range of the ring rows from 16 MiB on');
}

# The rows of a --check table: (op, impl, bytes, wrong) for the ring and
# the library, every time column a dash.
sub checked_rows {
    my ($table) = @_;
    my ($op, @rows);
    for (split /\n/, $table) {
        if (/^# (\w+) +ring +mpi$/) { $op = $1; next }
        next if /^#/ || !defined $op;
        my @f = split;
        return [] unless @f == 12 && "@f[2..5] @f[7..10]" eq '- - - - - - - -';
        push @rows, { op => $op, impl => 'ring', bytes => $f[0], wrong => $f[6] },
                    { op => $op, impl => 'mpi', bytes => $f[0], wrong => $f[11] };
    }
    return \@rows;
}

# ------------------------------------------------- the benchmark can fail --
# The chapter's ring with the reduce-scatter's addition dropped (each rank
# keeps what arrives instead of adding its share), built with the flags the
# Makefile used for this build's objects and linked the way the ring lab
# links a student's ring.
{
    my $dir = tempdir(CLEANUP => 1);
    my $source = slurp("$root/code/comm/ring.c") // die;
    my $broken = $source;
    my $changed = $broken =~ s/mine\[i\] \+= scratch\[i\];/mine[i] = scratch[i];/g;
    is($changed, 1, 'broken ring: the addition of the reduce-scatter found once');
    open my $f, '>', "$dir/ring.c" or die;
    print $f $broken;
    close $f;
    my $flags = slurp("$root/build/obj/cflags") // die;
    my (undef, @cflags) = split ' ', $flags;      # drop the compiler's name
    my @common = glob "$root/build/obj/common/*.o";
    ok(@common > 0, 'broken ring: the common objects are built');
    my ($s1, undef, $e1) = run('mpicc', @cflags, "-I$root/code/comm", '-c',
                               "$dir/ring.c", '-o', "$dir/ring.o");
    is($s1, 0, 'broken ring: compiles with the Makefile\'s flags') or diag $e1;
    my ($s2, undef, $e2) = run('mpicc', @cflags, '-c', "$root/code/comm/allreduce.c",
                               '-o', "$dir/allreduce.o");
    is($s2, 0, 'broken ring: allreduce.c compiles') or diag $e2;
    # The flags again when linking: under SANITIZE=1 they hold -fsanitize.
    my ($s3, undef, $e3) = run('mpicc', @cflags, "$dir/allreduce.o", "$dir/ring.o",
                               "$root/build/obj/comm/mesh.o", @common, '-lm',
                               '-o', "$dir/allreduce");
    is($s3, 0, 'broken ring: links') or diag $e3;

    # Two ranks timed, as JSON; three (more than two cores' worth) with
    # --check, as the ring lab grades them: the table, its times dashes.
    for my $n (2, 3) {
        my @how = $n == 2 ? (@quick, @ceiling, '--json') : ('--check');
        my ($status, $out, $err) = run(mpiexec($n, "$dir/allreduce", @how,
            qw(--min-bytes 8 --max-bytes 256)));
        is($status, 1, "broken ring on $n ranks (@how): exit status 1");
        like($err, qr/^allreduce: \d+ wrong elements/m,
             "broken ring on $n ranks: says how many elements are wrong");
        my $rows = $n == 2 ? rows_of($out) // [] : checked_rows($out);
        ok(@$rows > 0, "broken ring on $n ranks: still prints its rows");
        my %wrong;
        $wrong{"$_->{op} $_->{impl}"} += $_->{wrong} for @$rows;
        cmp_ok($wrong{'allreduce ring'} // 0, '>', 0,
               "broken ring on $n ranks: the ring all-reduce is wrong");
        cmp_ok($wrong{'reduce_scatter ring'} // 0, '>', 0,
               "broken ring on $n ranks: the ring reduce-scatter is wrong");
        is($wrong{'all_gather ring'}, 0,
           "broken ring on $n ranks: the ring all-gather, which adds nothing, is right");
        is(($wrong{'allreduce mpi'} // 0) + ($wrong{'reduce_scatter mpi'} // 0)
           + ($wrong{'all_gather mpi'} // 0), 0,
           "broken ring on $n ranks: MPICH's collectives are right");
    }
    # --check writes no rows of times: it refuses the flags that would.
    my ($status, undef, $err) = run(mpiexec(2, "$dir/allreduce", '--check',
                                            qw(--max-bytes 64 --json)));
    is($status, 2, '--check --json is refused');
    like($err, qr/^allreduce: --check times nothing, so --json has no rows/m,
         '... saying why') or diag $err;
    # One rank has nothing to add: the broken ring is not caught there.
    ($status) = run(mpiexec(1, "$dir/allreduce", @quick, @ceiling,
                    qw(--max-bytes 256 --json)));
    is($status, 0, 'broken ring on 1 rank: nothing to add, nothing wrong');
}

done_testing();
