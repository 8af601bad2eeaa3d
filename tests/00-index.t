#!/usr/bin/perl
# The book's identifier index lists what the chapters declare with "@ %def"
# (noweave -index, no autodefs). Every name on a %def line must be a
# file-scope identifier that the chunk above it declares in the code it
# tangles into: a function, a type, a struct, union or enum tag, an enum
# constant, a macro, or a file-scope variable. A local variable, a parameter
# or a struct member is not one: indexed, it links every English word and
# every other local of the same name in the book.
#
# The check tangles each C root with #line markers (notangle -L), so that
# every line of code is known by the chapter line it comes from, then reads
# the C as a compiler would at file scope: comments and strings left out,
# braces and parentheses counted.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use FleetTest;
use File::Temp ();
use Test::More;

my %KEYWORD = map { $_ => 1 } qw(
    auto break case char const continue default do double else enum extern
    float for goto if inline int long register restrict return short signed
    sizeof static struct switch typedef union unsigned void volatile while
    _Alignas _Alignof _Atomic _Bool _Complex _Generic _Imaginary _Noreturn
    _Static_assert _Thread_local);

# The tangled C of one root as tokens, each [text, "chapter:line"]; a
# "#define NAME" comes as the token ['#define', origin] and then NAME. The
# identifiers a macro's body names go to $directive ({line => {name => 1}}),
# members (after "." or "->") as ".name".
sub c_tokens {
    my ($text, $directive) = @_;
    $directive //= {};
    my @tokens;
    my ($file, $line) = ('?', 0);
    my ($in_comment, $in_directive) = (0, 0);
    for my $raw (split /\n/, $text, -1) {
        if ($raw =~ /^#line (\d+) "([^"]+)"$/) { ($line, $file) = ($1 - 1, $2); next }
        $line++;
        my $at = "$file:$line";
        push @tokens, ['', $at];                  # the line is C, even if blank
        my $s = $raw;
        if ($in_directive
            || !$in_comment && $s =~ /^\s*#\s*(\w+)\s*(\w*)/) {
            push @tokens, ['#define', $at], [$2, $at]
              if !$in_directive && $1 eq 'define';
            $in_directive = $s =~ /\\$/;
            $s =~ s{/\*.*?\*/|//.*|"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'}{ }g;
            $s =~ s/^\s*#\s*define\s+\w+//;
            $directive->{$at}{ ($1 // '') . $2 } = 1
              while $s =~ /(\.|->)?\s*\b([A-Za-z_]\w*)/g;
            next;
        }
        while (length $s) {
            if ($in_comment) {
                if ($s =~ s{^.*?\*/}{}) { $in_comment = 0 } else { $s = '' }
                next;
            }
            $s =~ s/^\s+// and next;
            $s =~ s{^/\*}{} and do { $in_comment = 1; next };
            $s =~ s{^//.*}{} and next;
            $s =~ s/^"(?:[^"\\]|\\.)*"// and do { push @tokens, ['"', $at]; next };
            $s =~ s/^'(?:[^'\\]|\\.)*'// and do { push @tokens, ["'", $at]; next };
            $s =~ s/^([A-Za-z_]\w*)// and do { push @tokens, [$1, $at]; next };
            $s =~ s/^(\d[\w.]*(?:[eEpP][-+]\d+)?)// and do { push @tokens, ['0', $at]; next };
            $s =~ s/^(->|\.\.\.|[-+*\/%&|^!<>=]=?|.)// and push @tokens, [$1, $at];
        }
    }
    return @tokens;
}

# The names each chapter line declares at file scope, added to $declared
# ({"chapter:line" => {name => 1}}); every identifier that appears deeper
# (locals, parameters, members) to $inner (name => "chapter:line"); the
# names declared as locals or parameters to $local (name => [lines]); and
# each line's identifiers that are not members (after "." or "->") to $code.
sub file_scope_names {
    my ($tokens, $declared, $inner, $local, $code) = @_;
    $local //= {};
    $code //= {};
    my ($braces, $parens) = (0, 0);
    my @enum_at;               # brace depths at which an enum's body is open
    my $enum_pending = 0;      # "enum" seen at this level, its "{" not yet
    my @struct_at;             # ... and a struct's or a union's
    my $struct_pending = 0;
    for my $i (0 .. $#$tokens) {
        my ($t, $at) = @{ $tokens->[$i] };
        my $prev = $i > 0 ? $tokens->[$i - 1][0] : '';
        my $next = $i < $#$tokens ? $tokens->[$i + 1][0] : '';
        if ($t eq '#define') { $declared->{$at}{$next} = 1; next }
        if ($prev eq '#define') { next }
        if ($t eq '{') {
            $braces++;
            push @enum_at, $braces if $enum_pending;
            push @struct_at, $braces if $struct_pending;
            $enum_pending = $struct_pending = 0;
            next;
        }
        if ($t eq '}') {
            pop @enum_at if @enum_at && $enum_at[-1] == $braces;
            pop @struct_at if @struct_at && $struct_at[-1] == $braces;
            $braces--;
            next;
        }
        if ($t eq '(') { $parens++; next }
        if ($t eq ')') { $parens--; next }
        if ($t eq ';' || $t eq '(' || $t eq ')') {
            $enum_pending = $struct_pending = 0;
            next if $t eq ';';
        }
        $enum_pending = 1 if $t eq 'enum';
        $struct_pending = 1 if $t eq 'struct' || $t eq 'union';
        next unless $t =~ /^[A-Za-z_]\w*$/ && !$KEYWORD{$t};
        # A member, accessed or declared, is not the identifier of its name.
        my $member = $prev eq '.' || $prev eq '->'
                     || @struct_at && $struct_at[-1] == $braces && $parens == 0
                        && $next =~ /^[,;\[:]$/;
        if ($member) { $code->{$at}{".$t"} = 1 }
        else         { $code->{$at}{$t} = 1 }
        my $file_scope = 0;
        if ($braces == 0 && $parens == 0) {
            # a declarator: the name before "(", "[", "=", ";", "," or "{"
            $file_scope = $next =~ /^[(\[=;,{]$/;
        } elsif ($braces == 0 && $parens == 1) {
            # a pointer to function: typedef int (*Name)(...)
            $file_scope = $prev eq '*' && $next eq ')'
                          && $i > 1 && $tokens->[$i - 2][0] eq '(';
        } elsif (@enum_at && $enum_at[-1] == $braces && $braces == 1
                 && $parens == 0) {
            # an enum constant at file scope: after "{" or ","
            $file_scope = $prev eq '{' || $prev eq ',';
        }
        if ($file_scope) { $declared->{$at}{$t} = 1 }
        elsif ($braces > 0 || $parens > 0) {
            $inner->{$t} //= $at;
            push @{ $local->{$t} }, $at
              if !(@struct_at && $struct_at[-1] == $braces)   # not a member
                 && declares_local($tokens, $i);
        }
    }
}

# Whether the identifier at $i is declared there as a local or a parameter:
# "type name", "type *name", "const struct tag *name" and the like, the
# type starting a statement or a parameter list, the name followed by "=",
# ";", ",", "[" or ")".
my %STATEMENT = map { $_ => 1 } qw(return case goto sizeof else do break
                                   continue if while for switch default);
sub declares_local {
    my ($tokens, $i) = @_;
    my $next = $i < $#$tokens ? $tokens->[$i + 1][0] : '';
    return 0 unless $next =~ /^[=;,\[)]$/;
    my $j = $i - 1;
    $j-- while $j >= 0 && $tokens->[$j][0] eq '*';
    my $types = 0;
    while ($j >= 0 && $tokens->[$j][0] =~ /^[A-Za-z_]\w*$/) {
        return 0 if $STATEMENT{ $tokens->[$j][0] };
        $types++;
        $j--;
        $j-- while $j >= 0 && $tokens->[$j][0] eq '*';
    }
    return $types > 0 && $j >= 0 && $tokens->[$j][0] =~ /^[{};(,]$/;
}

my $root = root();
chdir $root or die;
my @chapters = sort glob 'chapters/[0-9]*.nw';
my ($status, $roots) = run('noroots', @chapters);
is($status, 0, 'noroots lists the root chunks');
my @c_roots = grep { /\.(?:c|h|cu)$/ } map { /^<<(.*)>>$/ ? $1 : () }
              split /\n/, $roots;
ok(@c_roots >= 10, 'the chapters tangle into C files (' . @c_roots . ')');

# Each C file with line markers, as notangle -L tangles it: noweb's markup of
# the chapters (with tabs kept, -t), read once, and nt on it for each root.
my ($noroots) = grep { -x } map { "$_/noroots" } split /:/, $ENV{PATH};
my ($noweb_lib) = (defined $noroots ? slurp($noroots) // '' : '')
                  =~ /^LIB=(\S+)/m;
$noweb_lib //= '/usr/lib/noweb';
my $marked = File::Temp->new;
($status) = run({ stdout => "$marked" }, "$noweb_lib/markup", '-t', @chapters);
is($status, 0, 'the chapters read into noweb\'s markup');
open(my $saved_stdin, '<&', \*STDIN) or die "stdin: $!";
my (%declared, %inner, %local, %code, %tangled, %root_of);
for my $file (@c_roots) {
    open(STDIN, '<', "$marked") or die "$marked: $!";
    my ($st, $text, $err) = run("$noweb_lib/nt", '-t', '-L', "-R$file");
    is($st, 0, "$file tangles with line markers") or diag $err;
    {
        my ($at_file, $line) = ('?', 0);
        for (split /\n/, $text) {
            if (/^#line (\d+) "([^"]+)"$/) { ($line, $at_file) = ($1 - 1, $2); next }
            $root_of{ "$at_file:" . ++$line }{$file} = 1;   # "chapter:line" => roots
        }
    }
    my %directive;
    my @tokens = c_tokens($text, \%directive);
    for my $at (keys %directive) {
        for (keys %{ $directive{$at} }) { my $n = s/^(?:\.|->)/./r; $code{$at}{$n} = 1 }
    }
    $tangled{ $_->[1] } = 1 for @tokens;
    @tokens = grep { $_->[0] ne '' } @tokens;
    file_scope_names(\@tokens, \%declared, \%inner, \%local, \%code);
}
open(STDIN, '<&', $saved_stdin) or die "stdin: $!";

# The code chunks, each with its lines, and the %def lines, each with the
# chunk above it.
my (@chunks, @defs);
for my $chapter (@chapters) {
    open my $fh, '<:encoding(UTF-8)', $chapter or die "$chapter: $!";
    my ($chunk, $closed);
    while (my $line = <$fh>) {
        # A %def line after the chunk's closing "@" line, or after another
        # %def line, still belongs to the chunk.
        if ($closed && $line =~ /^@ %def\s+(.*?)\s*$/) {
            push @defs, { at => "$chapter:$.", chapter => $chapter,
                          from => $closed->{from}, to => $closed->{to},
                          chunk => $closed, names => [ split ' ', $1 ] };
            next;
        }
        undef $closed;
        if ($line =~ /^<<(.*)>>=\s*$/) {
            $chunk = { chapter => $chapter, name => $1, from => $. + 1,
                       to => $., text => '' };
            push @chunks, $chunk;
            next;
        }
        if ($line =~ /^@(?:\s|$)/) {
            push @defs, { at => "$chapter:$.", chapter => $chapter,
                          from => $chunk->{from}, to => $chunk->{to},
                          chunk => $chunk, names => [ split ' ', $1 ] }
              if $chunk && $line =~ /^@ %def\s+(.*?)\s*$/;
            $closed = $chunk;
            undef $chunk;
            next;
        }
        next unless $chunk;
        $chunk->{to} = $.;
        $chunk->{text} .= $line;
    }
}
ok(@defs >= 100, 'the chapters declare their identifiers (' . @defs . ' %def lines)');

my @wrong;
for my $def (@defs) {
    my (%here, $tangles);
    for my $n ($def->{from} .. $def->{to}) {
        my $at = "$def->{chapter}:$n";
        $tangles ||= $tangled{$at};
        $here{$_} = 1 for keys %{ $declared{$at} // {} };
    }
    for my $name (@{ $def->{names} }) {
        next if $here{$name};
        my $why = !$tangles ? 'its chunk is not C code'
                : $inner{$name} ? "a local, a parameter or a member (as at $inner{$name})"
                : 'not declared at file scope in this chunk';
        push @wrong, "$def->{at}: $name: $why";
    }
}
is(scalar @wrong, 0, 'every %def names a file-scope identifier its chunk declares')
  or diag(join "\n", @wrong);

# No local variable or parameter has the name of an indexed identifier:
# noweb would link it to the identifier, and a reader would take one for the
# other.
my %indexed = map { my $d = $_; map { $_ => $d } @{ $d->{names} } } @defs;
my @shadows;
for my $name (sort keys %indexed) {
    my %where = map { $_ => 1 } @{ $local{$name} // [] };
    push @shadows, map { "$_: a local or a parameter $name, but $name is indexed"
                         . " at $indexed{$name}{at}" } sort keys %where;
}
is(scalar @shadows, 0, 'no local or parameter shares a name with an indexed identifier')
  or diag(join "\n", @shadows);

# One name, one identifier: noweb indexes names, so two identifiers of the
# same name in two files (two static functions, two programs' enums) would
# share one entry. A name may be declared in a header and defined in a C file.
my %sites;
for my $def (@defs) {
    my %roots;
    for my $n ($def->{from} .. $def->{to}) {
        $roots{$_} = 1 for keys %{ $root_of{"$def->{chapter}:$n"} // {} };
    }
    push @{ $sites{$_} }, [ $def->{at}, sort keys %roots ] for @{ $def->{names} };
}
my @twice;
for my $name (sort keys %sites) {
    my %in = map { my ($at, @r) = @$_; map { $_ => $at } @r } @{ $sites{$name} };
    my @c = sort grep { /\.c$/ } keys %in;
    my @h = sort grep { /\.h$/ } keys %in;
    my %dirs = map { m{(.*)/} ? ($1 => $_) : () } keys %in;
    my @pair = @c > 1 ? @c[0, 1] : @h > 1 ? @h[0, 1]
             : keys %dirs > 1 ? (sort values %dirs)[0, 1] : ();
    push @twice, "$name: indexed for two identifiers, in "
                 . join(' and ', map { "$_ ($in{$_})" } @pair) if @pair;
}
is(scalar @twice, 0, 'no name is indexed for two different identifiers')
  or diag(join "\n", @twice);

# Every use the index records is a use in C code. noweb's finduses marks an
# indexed name wherever it stands as a word in another chunk (comments,
# strings, struct members, shell and awk scripts included); the Makefile
# filters its marks before noidx counts them (make index-stream). Here every
# mark that is left must be the identifier itself in the chunk's C.
my %chunk_at;                    # "chapter#k" => the k-th code chunk
{
    my %k;
    $chunk_at{ $_->{chapter} . '#' . ++$k{ $_->{chapter} } } = $_ for @chunks;
}
my %used_elsewhere;              # name => 1: the index lists a use
sub false_uses {
    my ($stream) = @_;
    my ($file, %k, $chunk, @false);
    %used_elsewhere = ();
    for (split /\n/, $stream) {
        if (/^\@file (.*)/) { $file = $1; next }
        if (/^\@begin code/) { $chunk = $chunk_at{ $file . '#' . ++$k{$file} }; next }
        if (/^\@end code/) { undef $chunk; next }
        next unless $chunk && /^\@index use (.*)/;
        my $name = $1;
        my $d = $indexed{$name} && $indexed{$name}{chunk};
        next if $d && $d == $chunk;           # noidx does not count these
        $used_elsewhere{$name} = 1;
        next if grep { $code{"$chunk->{chapter}:$_"}{$name} }
                     $chunk->{from} .. $chunk->{to};
        push @false, "$chunk->{chapter}:$chunk->{from}: <<$chunk->{name}>>"
                     . " is marked as using $name, which its C does not name";
    }
    return @false;
}
my ($st, $stream, $err) = run('make', '-s', '--no-print-directory', 'index-stream');
is($st, 0, 'make index-stream gives the marked-up chapters') or diag $err;
my @false = false_uses($stream);
is(scalar @false, 0, 'every use the index records is a use in C code')
  or diag(join "\n", @false);
# An identifier that no other chunk uses is printed "used only in this
# chunk" (chapters/preamble.tex), in place of noweb's "never used": the
# chunk that declares it must use it, on a line other than its declaration.
my %used_by_filtered = %used_elsewhere;
my @unused;
for my $def (@defs) {
    for my $name (@{ $def->{names} }) {
        next if $used_by_filtered{$name};
        my $used_here = grep {
            my $at = "$def->{chapter}:$_";
            $code{$at}{$name} && !$declared{$at}{$name}
        } $def->{from} .. $def->{to};
        push @unused, "$def->{at}: $name is used by no chunk, its own included"
          unless $used_here;
    }
}
is(scalar @unused, 0, 'every indexed identifier is used in code')
  or diag(join "\n", @unused);

# Unfiltered, finduses would record false uses; the test above would see them.
{
    my ($st2, $raw) = run('make', '-s', '--no-print-directory', 'index-stream',
                          'INDEX_FILTER=cat');
    cmp_ok(scalar(false_uses($raw)), '>', 0,
           "finduses alone marks words that are not uses (the filter's work)");
}

# The reading of C can fail: a local, a parameter and a member are refused,
# a function, a type, an enum constant, a macro and a variable are not.
{
    my $probe = join "\n", '#line 1 "probe"',
        '#define WIDTH 8', 'typedef struct { int member; } Pair;',
        'enum { ONE = 1, TWO };', 'static int table[WIDTH];',
        'typedef double (*Fn)(double);',
        'static int sum(const int *values, int n)', '{',
        '    int total = 0; /* total: not file scope */',
        '    for (int i = 0; i < n; i++) total += values[i];',
        '    return total;', '}', '';
    my (%d, %in);
    file_scope_names([ c_tokens($probe) ], \%d, \%in);
    my %seen = map { %$_ } values %d;
    is(join(' ', sort keys %seen), 'Fn ONE Pair TWO WIDTH sum table',
       'a probe file: its file-scope names, and no others');
    ok($in{total} && $in{values} && $in{member}, 'a probe file: its locals, parameters and members');
}
done_testing();
