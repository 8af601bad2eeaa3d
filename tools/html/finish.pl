#!/usr/bin/perl
# tools/html/finish.pl PAGE.html...: tex4ht's pages, finished in place.
#
# tex4ht writes the text as the fonts set it: the ligatures fi, fl, ff, ffi
# and ffl as single characters, and, in typewriter type, -- as an en dash
# and << >> as guillemets, which the PDF keeps as typed (the preamble's
# \DisableLigatures, which tex4ht does not apply). Here the letters are
# written out, and typewriter text gets back the characters typed, so that
# a reader can search the page and copy a command from it. And a link to
# nothing is unlinked, and every page's navigation links the contents.
use strict;
use warnings;
use open qw(:std :encoding(UTF-8));

my %letters = ("\x{FB00}" => 'ff', "\x{FB01}" => 'fi', "\x{FB02}" => 'fl',
               "\x{FB03}" => 'ffi', "\x{FB04}" => 'ffl');
my %typed = ("\x{2013}" => '--', "\x{2014}" => '---', "\x{AB}" => '&lt;&lt;',
             "\x{BB}" => '&gt;&gt;', "\x{A1}" => '!`', "\x{BF}" => '?`');
my $typed = join '', keys %typed;

for my $page (@ARGV) {
  open my $in, '<', $page or die "$page: $!\n";
  local $/;
  my $html = <$in>;
  close $in;
  $html =~ s/([\x{FB00}-\x{FB04}])/$letters{$1}/g;
  # noweb links a range of chunks in the index of identifiers ("375-77") to
  # a label it never sets, which tex4ht writes as href="#noweb.": the range
  # is printed unlinked, and the chunks on either side of it are linked.
  $html =~ s{<a\s+href="#noweb\.">(.*?)</a>}{$1}gs;
  # The navigation ends with the table of contents, on the first page.
  $html =~ s{(<div class="crosslinks">.*?)(</p></div>)}
            {$1<span class="nav"><a href="index.html">contents</a></span>$2}gs;
  # A typewriter span: its class names a Latin Modern typewriter font.
  $html =~ s{(<span\s+class="[^"]*lmtt[^"]*"\s*>)([^<]*)}
            {my ($tag, $text) = ($1, $2);
             $text =~ s/([$typed])/$typed{$1}/g; $tag . $text}ge;
  open my $out, '>', $page or die "$page: $!\n";
  print $out $html;
  close $out or die "$page: $!\n";
}
