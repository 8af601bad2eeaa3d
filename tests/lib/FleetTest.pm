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
our @EXPORT = qw(root run fleet_json close_to pdf_text);

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

1;
