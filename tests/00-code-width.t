#!/usr/bin/perl
# No line of code runs into the margin. The book sets code with noweb's
# smallcode option: \small typewriter (10 pt Latin Modern Mono, 5.25 pt a
# character) on an A4 page with 2.6 cm margins (a 449.5 pt measure), each code
# line indented by noweb's 10 pt code margin, so a line of 83 characters ends
# inside the measure and one of 84 sticks out by 1.4 pt. LaTeX does not report
# an overfull line of verbatim code, so this test measures the source: every
# line of every code chunk, tabs expanded to noweave's 8 columns.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use Test::More;

my $FITS = 83;    # characters of code that fit the measure (see above)

# The lines of code chunks in a .nw file longer than $fits characters, as
# "file:line: N characters".
sub long_lines {
    my ($file, $fits) = @_;
    open my $fh, '<:encoding(UTF-8)', $file or die "$file: $!";
    my ($in_code, @long) = (0);
    while (my $line = <$fh>) {
        chomp $line;
        if ($line =~ /^<<.*>>=\s*$/) { $in_code = 1; next }
        if ($line =~ /^@(?:\s|$)/)   { $in_code = 0; next }
        next unless $in_code;
        1 while $line =~ s/\t+/' ' x (length($&) * 8 - length($`) % 8)/e;
        push @long, sprintf('%s:%d: %d characters', $file, $., length $line)
          if length $line > $fits;
    }
    return @long;
}

my $root = root();
chdir $root or die;
my @chapters = sort glob 'chapters/*.nw';
ok(@chapters >= 8, 'the chapters are there to measure');
for my $chapter (@chapters) {
    my @long = long_lines($chapter, $FITS);
    is(scalar @long, 0, "$chapter: every code line fits in $FITS characters")
      or diag(join "\n", @long);
}

# Transcripts and other verbatim text are set in \small typewriter without
# the code margin (chapters/preamble.tex): 85 characters fit the measure.
# A source may set a group of them a size smaller (\footnotesize, 4.725 pt a
# character: 95 fit). They are the programs' output, included from build/
# (\verbatiminput) or written into the source (\begin{verbatim}); those of
# this build are read where it has written them.
my %VERBATIM_FITS = (small => 85, footnotesize => 95, scriptsize => 107);
{
    my @long;
    for my $source (@chapters, sort(glob 'solutions/*.tex'), sort(glob 'exercises/*.tex')) {
        open my $fh, '<:encoding(UTF-8)', $source or die "$source: $!";
        my ($in, $size) = (0, 'small');
        while (my $line = <$fh>) {
            chomp $line;
            $size = $1 if $line =~ /\\renewcommand\{\\verbatim\@font\}.*\\(small|footnotesize|scriptsize)\b/;
            $size = 'small' if $line =~ /\\endgroup/;
            my $VERBATIM_FITS = $VERBATIM_FITS{$size};
            if ($in && $line =~ /^\s*\\end\{verbatim\}/) { $in = 0; next }
            if ($in) {
                1 while $line =~ s/\t+/' ' x (length($&) * 8 - length($`) % 8)/e;
                push @long, sprintf('%s:%d: %d characters', $source, $., length $line)
                  if length $line > $VERBATIM_FITS;
                next;
            }
            $in = 1 if $line =~ /^\s*\\begin\{verbatim\}\s*$/;
            while ($line =~ /\\verbatiminput\{([^}]+)\}/g) {
                my $file = $1;
                open my $t, '<:encoding(UTF-8)', $file or next;    # not built yet
                while (my $out = <$t>) {
                    chomp $out;
                    1 while $out =~ s/\t+/' ' x (length($&) * 8 - length($`) % 8)/e;
                    push @long, sprintf('%s:%d: %d characters (included by %s:%d)',
                                        $file, $., length $out, $source, $fh->input_line_number)
                      if length $out > $VERBATIM_FITS;
                }
            }
        }
    }
    is(scalar @long, 0, 'every line of verbatim text fits the measure')
      or diag(join "\n", @long);
}

# The measure itself can fail: a chunk with one line too long is caught, one
# that fits is not, and a tab counts to the next multiple of 8.
{
    my $probe = File::Temp->new(SUFFIX => '.nw');
    binmode $probe, ':encoding(UTF-8)';
    print $probe "text\n<<c>>=\n", 'x' x $FITS, "\n", 'x' x ($FITS + 1), "\n",
                 "\t", 'x' x ($FITS - 7), "\n@ text\n", 'y' x 200, "\n";
    close $probe;
    my @long = long_lines("$probe", $FITS);
    is(scalar @long, 2, 'a probe chunk: the two lines over the measure are caught')
      or diag(join "\n", @long);
}
done_testing();
