#!/usr/bin/perl
# fix-defs.pl: the index fixes for chapters 06, 07 and 08, to run once from
# the repository root after those chapters are merged:
#
#     perl fix-defs.pl && make tangle && prove tests/00-index.t
#
# tests/00-index.t then checks the result. Each fix is by name, not by line
# number, so it applies to the chapters as they stand after their rewrite;
# running it twice changes nothing the second time.
#
# What it does, and why:
# - %def lines lose "main" (each program has one; indexed, the three
#   programs' mains share one entry) and the one-file static helpers whose
#   names are ordinary words and also name locals elsewhere: "total", "rate",
#   "run" (chapter 6) and "expected" (chapter 7). Indexed, every local total,
#   rate or run in the book linked to chapter 6's helper. Chapter 6's type
#   Op is dropped too: no code uses it.
# - Chapter 6's local NC (N x C elements of a (B, T, C) tensor) becomes BTC,
#   the name chapter 6 already gives the same quantity elsewhere, so that it
#   is not linked to the GEMM's block constant NC.
# - Chapter 6's struct members named gemm, which noweb would take for the
#   function gemm, become pack (the Model's GemmWorkspace: the buffers the
#   GEMM packs its blocks into) and gemm_flops (the TrainingState's measured
#   rate, as the figures of Appendix "Measuring this machine" and the report
#   "gemm_flops" call it).
# - Chapter 7's allreduce benchmark renames the identifiers it shared with
#   other programs: op_names (also the trainer's), print_table (also the
#   matrix-multiply benchmark's), REDUCE_SCATTER and ALL_GATHER (also the
#   planner's enum Collective). Its own style, ALLREDUCE, gives REDUCESCATTER
#   and ALLGATHER.
use strict;
use warnings;

my %fixes = (
    'chapters/06-reference.nw' => {
        undef_names => [qw(main total rate run Op)],
        patterns => [ [ qr/\bm->gemm\b/ => 'm->pack' ],
                      [ qr/\bset->gemm\b/ => 'set->gemm_flops' ],
                      [ qr/^(\s*GemmWorkspace) gemm;/ => '$1 pack;' ],
                      [ qr/^(\s*double) gemm;(?: {6})?/ => '$1 gemm_flops;' ] ],
        local_renames => [ [ 'NC' => 'BTC', qr/^(?:the\ forward\ pass\ of\ the\ model
            |the\ slices\ of\ block\ \[\[l\]\]'s\ activations
            |one\ transformer\ block,\ (?:forward|backward)
            |the\ backward\ pass\ of\ the\ model
            |from\ the\ loss\ back\ to\ the\ last\ block)$/x ] ],
    },
    'chapters/07-data-parallel.nw' => {
        undef_names => [qw(main expected)],
        renames => [ [ op_names => 'operation_names' ],
                     [ print_table => 'print_results' ],
                     [ REDUCE_SCATTER => 'REDUCESCATTER' ],
                     [ ALL_GATHER => 'ALLGATHER' ] ],
    },
    'chapters/08-sharded-state.nw' => {
        undef_names => [qw(main)],
    },
);

for my $file (sort keys %fixes) {
    my $fix = $fixes{$file};
    open my $in, '<', $file or die "fix-defs.pl: cannot read $file: $!\n";
    my @lines = <$in>;
    close $in;
    my ($chunk, $changed) = (undef, 0);
    for my $line (@lines) {
        my $was = $line;
        if ($line =~ /^<<(.*)>>=\s*$/) { $chunk = $1 }
        elsif ($line =~ /^@(?:\s|$)/) { undef $chunk }
        for (@{ $fix->{renames} // [] }) {
            my ($old, $new) = @$_;
            $line =~ s/\b\Q$old\E\b/$new/g;
        }
        for (@{ $fix->{patterns} // [] }) {
            my ($pattern, $replacement) = @$_;
            $line =~ s/$pattern/qq{"$replacement"}/ee;
        }
        for (@{ $fix->{local_renames} // [] }) {
            my ($old, $new, $in_chunk) = @$_;
            $line =~ s/\b\Q$old\E\b/$new/g
              if defined $chunk && $chunk =~ $in_chunk && $line !~ /^<</;
        }
        if ($line =~ /^@ %def /) {
            my %drop = map { $_ => 1 } @{ $fix->{undef_names} // [] };
            my ($head, $names) = $line =~ /^(@ %def)\s+(.*?)\s*$/;
            my @keep = grep { !$drop{$_} } split ' ', $names;
            $line = @keep ? "$head @keep\n" : "@\n";
            $line = $was if $line =~ /^\Q$head\E / && $was =~ /^\Q$head @keep\E\s*$/;
        }
        $changed++ if $line ne $was;
    }
    open my $out, '>', $file or die "fix-defs.pl: cannot write $file: $!\n";
    print $out @lines;
    close $out;
    print "$file: $changed lines changed\n";
}
