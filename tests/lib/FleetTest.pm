# tests/lib/FleetTest.pm: what every test needs: the repository root, a way
# to run a tool and read its JSON, and a comparison with a stated tolerance.
package FleetTest;
use strict;
use warnings;
use Cwd qw(abs_path);
use File::Basename qw(dirname);
use JSON::PP ();
use Test::More ();
use Exporter qw(import);
our @EXPORT = qw(root run fleet_json close_to pdf_text slurp read_macros
                 printed_number macro_agrees minigpt_params minigpt_flags
                 same_files different_files files_in refused_run);

sub root { abs_path(dirname(__FILE__) . '/../..') }

# Run a command (a list, no shell); return (exit status, stdout, stderr).
sub run {
    my @command = @_;
    my $dir = File::Temp::tempdir(CLEANUP => 1);
    my $pid = fork // die "fork: $!";
    if ($pid == 0) {
        open STDOUT, '>', "$dir/out" or die;
        open STDERR, '>', "$dir/err" or die;
        exec @command or exit 127;
    }
    waitpid $pid, 0;
    # A process killed by a signal reports 128 + the signal, as a shell
    # would, so that a crash can never pass for exit status 0.
    my $status = $? & 127 ? 128 + ($? & 127) : $? >> 8;
    local $/;
    open my $o, '<', "$dir/out" or die; my $out = <$o>;
    open my $e, '<', "$dir/err" or die; my $err = <$e>;
    return ($status, $out, $err);
}
use File::Temp ();

# Run build/bin/fleet with --json and decode what it printed.
sub fleet_json {
    my ($status, $out, $err) = run(root() . '/build/bin/fleet', @_, '--json');
    die "fleet @_ --json exited $status: $err" if $status != 0;
    return JSON::PP::decode_json($out);
}

# |got - want| <= rtol * |want|, reporting both values on failure.
sub close_to {
    my ($got, $want, $rtol, $name) = @_;
    my $ok = defined $got && abs($got - $want) <= $rtol * abs($want);
    Test::More::ok($ok, $name)
      or Test::More::diag(sprintf "got %s, want %s (relative tolerance %g)",
                          $got // 'undef', $want, $rtol);
    return $ok;
}

sub pdf_text {
    my ($pdf) = @_;
    my ($status, $text) = run('pdftotext', '-layout', $pdf, '-');
    die "pdftotext $pdf failed" if $status != 0;
    return $text;
}

# A file's bytes, or undef if it cannot be read.
sub slurp {
    my ($path) = @_;
    open(my $fh, '<:raw', $path) or return undef;
    local $/;
    return scalar <$fh>;
}

# Two files compared byte for byte. Both must have been written and hold
# something: a comparison of two files that no run wrote (two undefs, or two
# empty files) would otherwise pass.
sub compare_files {
    my ($want_same, $x, $y, $name) = @_;
    local $Test::Builder::Level = $Test::Builder::Level + 2;   # the caller's line
    my %bytes = ($x => slurp($x), $y => slurp($y));
    my @missing = grep { !defined $bytes{$_} || $bytes{$_} eq '' } $x, $y;
    if (@missing) {
        Test::More::ok(0, $name);
        Test::More::diag("not written, or empty: @missing");
        return 0;
    }
    my $same = $bytes{$x} eq $bytes{$y};
    my $ok = $want_same ? $same : !$same;
    Test::More::ok($ok, $name)
      or Test::More::diag(sprintf '%s (%d bytes) and %s (%d bytes) are %s',
                          $x, length $bytes{$x}, $y, length $bytes{$y},
                          $same ? 'the same' : 'different');
    return $ok;
}
sub same_files      { return compare_files(1, @_) }
sub different_files { return compare_files(0, @_) }

# The LaTeX macros that files matching GLOB define: name => text. A name
# defined twice is a failed test.
sub read_macros {
    my ($glob) = @_;
    my %macro;
    for my $file (glob $glob) {
        my $text = slurp($file) // next;
        while ($text =~ /^\\newcommand\{\\(\w+)\}\{(.*)\}$/mg) {
            Test::More::ok(0, "macro \\$1 defined once") if exists $macro{$1};
            $macro{$1} = $2;
        }
    }
    return \%macro;
}

# A number as a macro prints it: (value, half a unit in its last place),
# with its unit applied. Handles 1,023 and 0.9766 and -0.626 and 25\,GB and 40\,\% and
# \ensuremath{1.23\times10^{15}}; returns () for anything else.
my %unit = (B => 1, kB => 1e3, MB => 1e6, GB => 1e9, TB => 1e12, PB => 1e15,
            '%' => 1);
sub printed_number {
    my ($text) = @_;
    return () unless defined $text;
    my ($mantissa, $exponent, $rest);
    if ($text =~ /^\\ensuremath\{(-?[\d.]+)\\times10\^\{(-?\d+)\}\}(.*)$/) {
        ($mantissa, $exponent, $rest) = ($1, $2, $3);
    } elsif ($text =~ /^(-?\d[\d,]*(?:\.\d+)?)(.*)$/) {
        ($mantissa, $exponent, $rest) = ($1, 0, $2);
        $mantissa =~ s/,//g;
    } else {
        return ();
    }
    $rest =~ s/^\\,//;
    $rest =~ s/^\\%$/%/;
    return () if $rest ne '' && !exists $unit{$rest};
    my $scale = 10**$exponent * ($rest eq '' ? 1 : $unit{$rest});
    my $decimals = $mantissa =~ /\.(\d+)$/ ? length $1 : 0;
    return ($mantissa * $scale, 0.5 * 10**(-$decimals) * $scale);
}

# The macro NAME of MACROS prints WANT correctly to the digits it shows.
sub macro_agrees {
    my ($macros, $name, $want, $label) = @_;
    my ($got, $half) = printed_number($macros->{$name});
    my $ok = defined $got
          && abs($got - $want) <= $half * (1 + 1e-9) + 1e-12 * abs($want);
    Test::More::ok($ok, "$label (\\$name)")
      or Test::More::diag(sprintf 'printed %s, want %.10g',
                          $macros->{$name} // 'nothing', $want);
    return $ok;
}

# minigpt's parameters from its shapes (layers, hidden, seq, vocab):
# embeddings, L blocks of (ln1 2C, qkv 3C²+3C, proj C²+C, ln2 2C, fc 4C²+4C,
# fcproj 4C²+C), the final layer norm and the head.
sub minigpt_params {
    my (%c) = @_;
    my ($L, $C, $T, $V) = @c{qw(layers hidden seq vocab)};
    return $V * $C + $T * $C + $L * (12 * $C**2 + 13 * $C) + 2 * $C + $C * $V;
}

# The flags that give minigpt a shape: (layers => 2, ...) -> --layers 2 ...
sub minigpt_flags {
    my (%c) = @_;
    return map { ("--$_", $c{$_}) } sort keys %c;
}

# The names in a folder, without . and .., sorted.
sub files_in {
    my ($d) = @_;
    opendir(my $dh, $d) or die "$d: $!";
    return sort grep { !/^\.\.?$/ } readdir $dh;
}

# Run a command line that must be refused, with --output into a fresh
# folder: exit status 2, nothing on standard output, one line on standard
# error matching $must, and no output file. Returns that line.
sub refused_run {
    my ($name, $must, @command) = @_;
    require File::Temp;
    my $dir = File::Temp::tempdir(CLEANUP => 1);
    my ($status, $out, $err) = run(@command, '--output', "$dir/out.txt");
    Test::More::is($status, 2, "$name: exit status 2");
    Test::More::is($out, '', "$name: nothing on stdout");
    my $lines = () = $err =~ /\n/g;
    Test::More::is($lines, 1, "$name: one line on stderr") or Test::More::diag($err);
    Test::More::like($err, $must, "$name: the line says why");
    Test::More::is_deeply([files_in($dir)], [], "$name: no output file");
    return $err;
}

1;
