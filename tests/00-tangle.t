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

# Which chapters contribute to each file, worked out here from the .nw
# sources without noweb: a code chunk starts at "<<name>>=" and ends at a line
# starting "@"; every <<name>> inside it (not escaped as @<<) is a use. A
# file's chapters are those that define a chunk its root reaches through uses.
my @chapters = sort glob 'chapters/[0-9]*.nw';
my (%defined_in, %uses, %used);
for my $chapter (@chapters) {
    open my $fh, '<', $chapter or die "$chapter: $!";
    my $chunk;
    while (my $line = <$fh>) {
        if ($line =~ /^<<(.+)>>=\s*$/) {
            $chunk = $1 =~ s/\s+/ /gr;
            $defined_in{$chunk}{$chapter} = 1;
            next;
        }
        if ($line =~ /^@(?:\s|$)/) { undef $chunk; next }
        next unless defined $chunk;
        while ($line =~ /(?<!@)<<(.+?)>>(?!=)/g) {
            my $use = $1 =~ s/\s+/ /gr;
            push @{ $uses{$chunk} }, $use;
            $used{$use} = 1;
        }
    }
}
sub contributors {
    my ($root) = @_;
    my (%seen, %from);
    my @todo = ($root);
    while (defined(my $chunk = shift @todo)) {
        next if $seen{$chunk}++;
        $from{$_} = 1 for keys %{ $defined_in{$chunk} // {} };
        push @todo, @{ $uses{$chunk} // [] };
    }
    return grep { $from{$_} } @chapters;
}
my @roots = sort grep { !$used{$_} } keys %defined_in;
is_deeply(\@roots, [ sort @tangled ], 'every root chunk is a tangled file');

my $several = 0;
for my $file (@tangled) {
    my ($tangled_text, $committed_text) = map { slurp($_) }
        "$fresh/$file", "$root/$file";
    ok(defined $tangled_text && defined $committed_text
       && $tangled_text eq $committed_text, "$file is in sync with its chapter");
    open my $fh, '<', "$root/$file" or next;
    my $first = <$fh>;
    my ($list, $noun) = $first =~ /Tangled from (.+); edit the (chapters?), not this file\./;
    ok(defined $list, "$file: its first line says where it is tangled from")
      or next;
    my @named = split /, | and /, $list;
    my @want = contributors($file);
    is_deeply(\@named, \@want, "$file names every chapter that contributes to it")
      or diag("names: @named\nwant:  @want");
    is($noun, @named == 1 ? 'chapter' : 'chapters', "$file: chapter or chapters");
    ok(!grep({ !-f "$root/$_" } @named), "$file: the chapters it names exist");
    $several++ if @want > 1;
}
# The minigpt trainer's main.c has code from more than one chapter, so a
# header that named only the first would fail above.
cmp_ok($several, '>=', 1, 'some files gather code from several chapters');
done_testing();
