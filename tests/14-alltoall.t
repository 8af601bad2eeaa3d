#!/usr/bin/perl
# Chapter 14, the all-to-all measured: allreduce --op alltoall on 2 and 4
# ranks. Every rank receives exactly the blocks it should, from the book's
# pairwise exchange and from MPICH's MPI_Alltoall, at every size (rounded
# down to whole blocks of floats, one per rank); the table prints the
# largest difference; busbw = algbw x (n-1)/n, as nccl-tests defines it
# for the all-to-all; --op all still means the ring's three operations.
# Two broken pairwise exchanges (one that forgets the rank's own block,
# one that files each received block in the wrong place) are caught: exit
# status 1, wrong elements counted, a largest difference above 0. Bad
# input is refused with one line and exit 2 on every rank.
#
# No timing is asserted. Run after `make`:  prove -v tests/14-alltoall.t
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
ok(-x $bin, 'build/bin/allreduce is built') or BAIL_OUT('run make');
# The first-touch rate from the machine file make measured once.
my @quick = (qw(--seconds 0.001 --warmup 1 --repeats 1 --memcpy 10
                --min-bytes 4), '--machine', "$root/build/machine.json");

# Sizes of an all-to-all sweep on n ranks: the powers of two from 4 to
# max, each rounded down to whole blocks of one float per rank.
sub sizes {
    my ($n, $max) = @_;
    my @s;
    for (my $b = 4; $b <= $max; $b *= 2) {
        my $whole = int($b / (4 * $n)) * 4 * $n;
        push @s, $whole if $whole > 0;
    }
    return @s;
}

# Rows of a --data CSV, as hashes keyed by its header.
sub csv_rows {
    my ($text) = @_;
    my ($head, @lines) = split /\n/, $text // '';
    my @keys = split /,/, $head // '';
    return map { my %r; @r{@keys} = split /,/; \%r } @lines;
}

# A sweep on n ranks, its rows as CSV (--data), its table (--transcript)
# and its summary (--latex) from one run: exit 0, exactly the rows asked
# for, none wrong, busbw = algbw x (n-1)/n; the table's last line and the
# summary give the largest difference, 0.
sub sweep_ok {
    my ($n, $max) = @_;
    my $name = "$n rank" . ($n > 1 ? 's' : '') . ", up to $max bytes";
    my $dir = tempdir(CLEANUP => 1);
    my ($status, $out, $err) = run(mpiexec($n, $bin, @quick, '--op',
        'alltoall', '--max-bytes', $max, '--transcript', "$dir/t.txt",
        '--data', "$dir/rows.csv", '--latex', 'Test'));
    is($status, 0, "$name: exit 0") or diag $err;
    my @rows = csv_rows(slurp("$dir/rows.csv"));
    my @coll = grep { $_->{op} eq 'alltoall' } @rows;
    is(scalar(@coll) + 2, scalar @rows,
       "$name: only all-to-all rows, then first_touch and memcpy");
    my (%want, %got);
    for my $s (sizes($n, $max)) { $want{"pairwise $s"}++; $want{"mpi $s"}++ }
    $got{"$_->{impl} $_->{size}"}++ for @coll;
    is_deeply(\%got, \%want, "$name: the pairwise exchange and MPICH's, "
              . 'once each at every size of whole blocks');
    is(scalar(grep { $_->{wrong} != 0 } @coll), 0,
       "$name: every rank received exactly the blocks it should");
    is(scalar(grep { $_->{count} * 4 != $_->{size} } @coll), 0,
       "$name: count = size / 4");
    my @busbw = grep {
        abs($_->{busbw} - $_->{algbw} * ($n - 1) / $n)
          > 1e-5 * $_->{algbw} + 1e-12
    } @coll;
    is(scalar @busbw, 0, "$name: busbw = algbw x (n-1)/n in every row")
        or diag join "\n", map { "$_->{impl} $_->{size}: algbw "
                                 . "$_->{algbw} busbw $_->{busbw}" } @busbw;
    my @algbw = grep { abs($_->{algbw} - $_->{size} / $_->{time_s} / 1e9)
                       > 1e-5 * $_->{algbw} } @coll;
    is(scalar @algbw, 0, "$name: algbw = size / time in every row");
    my $table = slurp("$dir/t.txt") // '';
    like($table, qr/^# \Q$n\E ranks?, float32 blocks, /,
         "$name: the table's header says what moved");
    like($table, qr/^# alltoall\s+pairwise\s+mpi$/m,
         "$name: pairwise beside mpi");
    like($table, qr/^# every block checked against what its sender sent: (?#
                   )largest difference 0$/m,
         "$name: the table prints the largest difference, 0");
    like($out, qr/^\\newcommand\{\\TestLargestDifference\}\{0\}$/m,
         "$name: --latex gives the largest difference");
    like($out, qr/^\\newcommand\{\\TestWrong\}\{0\}$/m,
         "$name: --latex counts none wrong");
}

sweep_ok(2, 4096);
sweep_ok(4, 128);            # four ranks share the cores: a short sweep

# --op all is the ring's three operations, without the all-to-all.
{
    my ($status, $out) = run(mpiexec(2, $bin, @quick, qw(--max-bytes 16
                                                          --json)));
    my $rows = eval { JSON::PP::decode_json($out) } // [];
    is(scalar(grep { $_->{op} eq 'alltoall' } @$rows), 0,
       '--op all: no all-to-all');
    is(scalar(grep { $_->{op} eq 'allreduce' } @$rows), 2 * 3,
       '--op all: the all-reduce as before, 4 to 16 bytes, ring and mpi');
}

# ----------------------------------------------- a broken exchange, caught --
{
    # The copy sits where its #include "../common/cli.h" finds the header.
    my $dir = tempdir(CLEANUP => 1);
    mkdir "$dir/comm" or die;
    symlink "$root/code/common", "$dir/common" or die "symlink: $!";
    my $source = slurp("$root/code/comm/allreduce.c") // die;
    my (undef, @cflags) = split ' ', slurp("$root/build/obj/cflags") // die;
    my @common = glob "$root/build/obj/common/*.o";
    my %broken = (
        'forgets its own block' => [
            qr/    memcpy\(received \+ \(size_t\)rank \* block,[^;]*;\n/, '',
            [2]],
        'files blocks in the wrong place' => [
            qr/received \+ \(size_t\)from \* block,/,
            'received + (size_t)to * block,', [4]],
    );
    for my $what (sort keys %broken) {
        my ($pattern, $replacement, $ranks) = @{ $broken{$what} };
        (my $copy = $source) =~ s/$pattern/$replacement/;
        isnt($copy, $source, "broken exchange that $what: made");
        write_file("$dir/comm/allreduce.c", $copy);
        my ($s1, undef, $e1) = run('mpicc', @cflags, "-I$root/code/comm",
                                   '-c', "$dir/comm/allreduce.c", '-o',
                                   "$dir/a.o");
        is($s1, 0, "broken exchange that $what: compiles") or diag $e1;
        my ($s2, undef, $e2) = run('mpicc', @cflags, "$dir/a.o",
            "$root/build/obj/comm/ring.o", "$root/build/obj/comm/mesh.o",
            @common, '-lm', '-o', "$dir/allreduce");
        is($s2, 0, "broken exchange that $what: links") or diag $e2;
        for my $n (@$ranks) {
            my ($status, $out, $err) = run(mpiexec($n, "$dir/allreduce",
                @quick, qw(--op alltoall --max-bytes 64 --transcript),
                "$dir/t.txt", '--json'));
            is($status, 1, "broken exchange that $what, $n ranks: exit 1");
            like($err, qr/^allreduce: \d+ wrong elements/m,
                 "broken exchange that $what, $n ranks: says so");
            my $rows = eval { JSON::PP::decode_json($out) } // [];
            my %wrong;
            $wrong{$_->{impl}} += $_->{wrong} for @$rows;
            cmp_ok($wrong{pairwise} // 0, '>', 0,
                   "broken exchange that $what, $n ranks: wrong blocks "
                   . 'counted');
            is($wrong{mpi} // -1, 0,
               "broken exchange that $what, $n ranks: MPICH's is right");
            my ($largest) = (slurp("$dir/t.txt") // '')
                =~ /largest difference (\S+)$/m;
            ok(defined $largest && $largest > 0,
               "broken exchange that $what, $n ranks: the largest "
               . 'difference is above 0') or diag $largest // 'none';
        }
    }
}

# ------------------------------------------------------------ bad input --
for my $n (2, 4) {
    refused("$n ranks: --op Alltoall", '--op',
            mpiexec($n, $bin, @quick, qw(--op Alltoall --max-bytes 64)));
}
refused('4 ranks: --op alltoall with --group', '--group',
        mpiexec(4, $bin, @quick, qw(--op alltoall --group 1 --max-bytes 64)));
refused('4 ranks: --max-bytes 15, below a float per rank', '--max-bytes',
        mpiexec(4, $bin, @quick, qw(--op alltoall --max-bytes 15)));

done_testing();
