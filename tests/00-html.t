#!/usr/bin/perl
# The HTML edition (make html, build/html/) read in a real headless Chromium,
# driven through the DevTools protocol (tools/html/Browser.pm): every page
# loads with no error in its console and fetches nothing from a network;
# every image and every internal link (a chunk's, an identifier's, a
# reference's, the navigation's) resolves; every figure is on a page as SVG;
# the numbers on two chapters' pages are the macros the PDF prints; and a
# screenshot of a chapter's page is not blank.
#
# `make browser` installs Debian's chromium where it is missing and the tests
# run as root; where it cannot, the whole file skips, saying why.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib", "$FindBin::Bin/../tools/html";
use FleetTest;
use Browser;
use File::Path qw(make_path remove_tree);
use Test::More;
use Time::HiRes ();
use Encode ();
binmode Test::More->builder->$_, q(:encoding(UTF-8))
  for qw(output failure_output todo_output);

my $root = root();
chdir $root or die "$root: $!";
my $html = "$root/build/html";

my $browser_said = `make --no-print-directory browser 2>&1`;
plan skip_all => 'no headless Chromium, and `make browser` could not install it: '
  . join(' ', split ' ', $browser_said) if $? != 0 || !Browser::program();

my $made = `make --no-print-directory html 2>&1`;
is(exit_status($?), 0, 'make html weaves the HTML edition')
  or BAIL_OUT("make html failed:\n$made");

my $out = "$root/build/html-test";
remove_tree($out);
make_path("$out/profile");
my $browser = Browser->start(profile => "$out/profile",
                             log => "$out/chromium.log", size => '1000,1400',
                             timeout => 60);

# Every page, loaded in turn: its errors, images, links, ids and text.
my @pages = map { s{.*/}{}r } sort glob "$html/*.html";
ok(@pages >= 30, scalar(@pages) . ' pages: a page per chapter, part and '
   . 'appendix, and the contents');
my (%ids, %links, %text, %title, %figures_shown);
my $maths = 0;
my $started = Time::HiRes::time();
for my $page (@pages) {
  my @errors = $browser->load("file://$html/$page");
  ok(!@errors, "$page loads with no console error")
    or diag join "\n", @errors[0 .. ($#errors < 9 ? $#errors : 9)];
  my $seen = $browser->evaluate(<<'JS');
({
  title: document.title,
  ids: Array.from(document.querySelectorAll('[id]'), e => e.id)
    .concat(Array.from(document.querySelectorAll('a[name]'), e => e.name)),
  links: Array.from(document.querySelectorAll('a[href]'),
                    a => a.getAttribute('href'))
    .concat(Array.from(document.querySelectorAll('*'),
              e => e.getAttributeNS('http://www.w3.org/1999/xlink', 'href'))
            .filter(h => h)),
  images: Array.from(document.images, i => ({
    src: i.getAttribute('src'), shown: i.complete && i.naturalWidth > 0 })),
  fetched: performance.getEntriesByType('resource').map(e => e.name),
  maths: document.getElementsByTagName('math').length,
  scripts: document.scripts.length,
  text: document.body.innerText
})
JS
  $title{$page} = $seen->{title};
  $ids{$page} = { map { $_ => 1 } @{ $seen->{ids} } };
  $links{$page} = $seen->{links};
  $text{$page} = $seen->{text};
  my @broken = map { $_->{src} } grep { !$_->{shown} } @{ $seen->{images} };
  ok(!@broken, "$page: every image is shown") or diag "not shown: @broken";
  $figures_shown{$_->{src}} = 1
    for grep { $_->{shown} } @{ $seen->{images} };
  my @remote = grep { !m{^file://} } @{ $seen->{fetched} };
  ok(!@remote && !$seen->{scripts}, "$page: no script, nothing fetched but "
     . 'its own files') or diag "fetched: @remote";
  $maths += $seen->{maths};
  diag sprintf "%s %.1f s", $page, Time::HiRes::time() - $started if $ENV{HTML_TIMES};
}
ok($maths > 100, "the mathematics is MathML ($maths formulas), "
   . 'which the browser sets without a script');

# Every internal link: its page exists, and so does the id it names.
for my $page (@pages) {
  my @dangling;
  for my $link (@{ $links{$page} }) {
    next if $link =~ m{^(?:https?|mailto):};
    my ($file, $fragment) = $link =~ /^([^#]*)(?:#(.*))?$/;
    $file = $page if $file eq '';
    if ($file =~ m{^/|^[a-z]+:} || !-e "$html/$file") {
      push @dangling, $link;
    } elsif (defined $fragment && $fragment ne '' && $file =~ /\.html$/
             && !$ids{$file}{ $fragment =~ s/%([0-9A-Fa-f]{2})/chr hex $1/ger }) {
      push @dangling, $link;
    }
  }
  ok(!@dangling, "$page: its " . scalar(@{ $links{$page} })
     . ' links resolve')
    or diag "dangling: @dangling[0 .. ($#dangling < 9 ? $#dangling : 9)]";
}

# noweb's cross-references are links: from a chunk to the chunks it uses,
# to its continuation and to where it is used, across pages, and from the
# index of identifiers to each definition.
my @chunk_links = grep { /#noweb\.NW/ } map { @{ $links{$_} } } @pages;
my @across = grep { /^book\w+\.html#noweb\.NW/ } @chunk_links;
ok(@chunk_links > 1000 && @across > 100, scalar(@chunk_links) . ' links of '
   . 'noweb\'s between chunks, ' . scalar(@across) . ' of them to another page');

# References read as in the PDF: an appendix by its letter.
my @numbered = grep { $text{$_} =~ /\bAppendix\s+\d/ } @pages;
ok(!@numbered, 'every reference to an appendix gives its letter')
  or diag "an appendix by a number on @numbered";

# Every figure script's plot is on a page, as SVG, and shown.
for my $script (sort glob "$root/figures/*.gp") {
  my ($name) = $script =~ m{([\w-]+)\.gp$};
  ok($figures_shown{"figures/$name.svg"}, "figure $name is shown as SVG");
}

# The numbers: every run-script macro that a chapter's prose uses, as the
# PDF prints it, is in the text of that chapter's page.
my %chapter_files;
my $current;
for my $file (sort glob "$root/chapters/[0-9]*.nw") {
  my $source = slurp($file);
  $current = $1 if $source =~ /^\\chapter\{([^{}]+)\}/m;
  push @{ $chapter_files{$current} }, $file if defined $current;
}
for my $chapter ('The memory floor', 'The layout decision') {
  my ($page) = grep { $title{$_} =~ /^\S+ \Q$chapter\E$/ } @pages;
  ok($page, "the chapter '$chapter' has a page") or next;
  my $prose = '';
  for my $file (@{ $chapter_files{$chapter} }) {
    my $source = slurp($file);
    $source =~ s/^<<[^\n]*>>=\n.*?^@(?:[ \t]|$)//msg; # code chunks
    $source =~ s/(?<!\\)%.*$//mg;                    # comments
    my @exercises = $source =~ /\\input\{(exercises\/[^{}]+?)(?:\.tex)?\}/g;
    $prose .= $source . join '', map { slurp("$root/$_.tex") // '' } @exercises;
  }
  # The macros of the numbers files the chapter inputs, as the PDF reads them.
  my @inputs = $prose =~ /\\input\{(build\/numbers\/[^{}]+?\.tex)\}/g;
  my $macros = read_macros('{' . join(',', map { "$root/$_" } @inputs) . '}');
  (my $page_text = $text{$page}) =~ s/[\s\x{a0}\x{2009}\x{200a}\x{202f}]+/ /g;
  my ($checked, @missing) = (0);
  my %used = map { $_ => 1 } $prose =~ /\\([A-Za-z]+)(?![A-Za-z])/g;
  for my $name (sort grep { exists $macros->{$_} } keys %used) {
    my $printed = Encode::decode('UTF-8', $macros->{$name});
    $printed =~ s/\{,\}/,/g;
    $printed =~ s/\\%/%/g;
    # The pieces between spaces (a thin space, \, in LaTeX) in order, with
    # any space between them, and no digit just before or after.
    my @pieces = grep { $_ ne '' } split /\\[,;! ]|\s+/, $printed;
    next if !@pieces || grep { /[\\{}\$^_~'`]|--/ } @pieces;
    $checked++;
    my $pattern = join '\s?', map { quotemeta } @pieces;
    push @missing, "\\$name = " . join ' ', @pieces
      unless $page_text =~ /(?<![\d.])$pattern(?![\d])/;
  }
  ok($checked >= 10 && !@missing, "$page ('$chapter'): the $checked numbers "
     . 'its prose takes from the runs are the PDF\'s macros')
    or diag "not on the page: @missing";
}

# A screenshot of Chapter 1's page, and of an empty page to show that the
# measure of ink can fail: the chapter's has text and colour on it.
my $ink = <<'JS';
(async () => {
  const picture = new Image();
  picture.src = 'data:image/png;base64,' + SHOT;
  await picture.decode();
  const canvas = document.createElement('canvas');
  canvas.width = picture.width;
  canvas.height = picture.height;
  const context = canvas.getContext('2d');
  context.drawImage(picture, 0, 0);
  const rgba = context.getImageData(0, 0, canvas.width, canvas.height).data;
  let inked = 0;
  const colours = new Set();
  for (let i = 0; i < rgba.length; i += 4) {
    if (rgba[i] < 192 || rgba[i + 1] < 192 || rgba[i + 2] < 192) inked++;
    if (colours.size < 4096)
      colours.add(rgba[i] << 16 | rgba[i + 1] << 8 | rgba[i + 2]);
  }
  return { width: canvas.width, height: canvas.height,
           ink: inked / (rgba.length / 4), colours: colours.size };
})()
JS
my %measured;
my ($chapter_page) = grep { $title{$_} =~ /^1 The memory floor$/ } @pages;
for my $case ([blank => 'about:blank'], [chapter => "file://$html/$chapter_page"]) {
  my ($name, $url) = @$case;
  $browser->load($url);
  my $shot = $browser->screenshot;
  write_file("$out/$name.png", $shot);
  $browser->load("file://$html/index.html");
  require MIME::Base64;
  my $base64 = MIME::Base64::encode_base64($shot, '');
  $measured{$name} = $browser->evaluate($ink =~ s/SHOT/'$base64'/r);
}
is("$measured{chapter}{width}x$measured{chapter}{height}", '1000x1400',
   'the screenshot is the window: 1000 by 1400 pixels');
ok($measured{blank}{ink} == 0, 'an empty page measures as blank');
ok($measured{chapter}{ink} > 0.01 && $measured{chapter}{ink} < 0.5
   && $measured{chapter}{colours} > 16,
   sprintf('the chapter\'s screenshot (build/html-test/chapter.png) is not '
           . 'blank: %.1f %% of it inked, %d colours',
           100 * $measured{chapter}{ink}, $measured{chapter}{colours}));
$browser->stop;
done_testing();
