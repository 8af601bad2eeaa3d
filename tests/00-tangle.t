#!/usr/bin/perl
# The committed code/ and figures/ are exactly what the chapters tangle into.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use File::Find;
use File::Temp qw(tempdir);
use Test::More;

my $root = root();
chdir $root or die;
my $fresh = tempdir(CLEANUP => 1);
my ($status, undef, $err) = run('make', '-s', '--no-print-directory',
                                'tangle-into', "DEST=$fresh");
is($status, 0, 'the chapters tangle') or diag $err;

sub files_under {
    my ($top) = @_;
    my @files;
    for my $dir ('code', 'figures') {
        next unless -d "$top/$dir";
        find({ no_chdir => 1, wanted => sub {
            push @files, substr($_, length($top) + 1) if -f $_ } }, "$top/$dir");
    }
    return sort @files;
}

my @tangled = files_under($fresh);
my @committed = files_under($root);
ok(scalar(@tangled) >= 8, 'the chapters produce the tool sources and figures')
  or diag "tangled: @tangled";
is_deeply(\@committed, \@tangled,
          'code/ and figures/ hold exactly the files the chapters produce');

for my $file (@tangled) {
    my ($same) = run('cmp', '-s', "$fresh/$file", "$root/$file");
    is($same, 0, "$file is in sync with its chapter");
    open my $fh, '<', "$root/$file" or next;
    my $first = <$fh>;
    like($first, qr{Tangled from (chapters/\S+\.nw)}, "$file names its chapter");
    my ($chapter) = $first =~ m{(chapters/\S+\.nw)};
    ok(defined $chapter && -f "$root/$chapter", "$file: its chapter exists");
}
done_testing();
