# tests/lib/FleetTest.pm: what every test needs: the repository root; a way
# to run a tool (alone or under mpiexec) and read its JSON; the contracts
# every tool keeps (a refusal is one line and exit status 2; --verify ends
# in OK within its tolerance); comparisons with a stated tolerance; and the
# checks that end every chapter's solutions and lab tests.
package FleetTest;
use strict;
use warnings;
use Cwd qw(abs_path);
use File::Basename qw(dirname);
use File::Temp ();
use JSON::PP ();
use POSIX ();
use Time::HiRes ();
use Test::More ();
use Exporter qw(import);
our @EXPORT = qw(root run exit_status mpiexec json_of fleet_json close_to
                 round_up grouped camel pdf_text slurp read_macros
                 printed_number macro_agrees minigpt_params minigpt_flags
                 same_files different_files files_in exercise_items refused
                 refused_no_output verify_ok solution_sources_ok
                 exercise_file_ok answers_not_given_away solutions_pdf_ok
                 write_file lab_documented mpiexec_stand_in at_path
                 same_checkpoints different_checkpoints mpi_turn link_recipe
                 build_mutant gpu_verify_ok tp_block_counts_ok
                 same_tp_counts_ok);

sub root { abs_path(dirname(__FILE__) . '/../..') }

# The value at a dotted path in decoded JSON: at_path($report,
# 'step_breakdown.exposed_comm_s.tp'); undef where any step is missing.
sub at_path {
    my ($json, $path) = @_;
    for my $key (split /\./, $path) {
        return undef unless ref $json eq 'HASH';
        $json = $json->{$key};
    }
    return $json;
}

# The exit status a shell would report for a wait status ($?): the process's
# own status, or 128 + the signal that killed it, so that a crash can never
# pass for exit status 0. Never read $? >> 8 alone.
sub exit_status {
    my ($wait) = @_;
    return $wait & 127 ? 128 + ($wait & 127) : $wait >> 8;
}

# Run a command (a list, no shell); return (exit status, stdout, stderr),
# the status as exit_status gives it. A first argument { stdout => PATH }
# sends standard output to PATH instead (stdout is then returned as '').
sub run {
    my %opt = ref $_[0] eq 'HASH' ? %{ shift() } : ();
    my @command = @_;
    my $dir = File::Temp::tempdir(CLEANUP => 1);
    my $stdout = $opt{stdout} // "$dir/out";
    my $status;
    # MPICH's launcher races its own proxies when every rank exits at
    # once (a refusal): it can write to the control socket of a proxy that
    # has gone and die of SIGPIPE (status 141) whatever the ranks returned.
    # That is the launcher's failure, not the program's, whose output goes
    # to files and cannot take a SIGPIPE; such a run is run again, at most
    # twice, and says so.
    my $launched = grep { $_ eq 'mpiexec' } @command;
    for my $try (1 .. 3) {
        my $pid = fork // die "fork: $!";
        if ($pid == 0) {
            open STDOUT, '>', $stdout or POSIX::_exit(127);
            open STDERR, '>', "$dir/err" or POSIX::_exit(127);
            exec { $command[0] } @command
              or POSIX::_exit(127);       # no END blocks in the child
        }
        waitpid($pid, 0) == $pid or die "waitpid: $!";
        $status = exit_status($?);
        last unless $launched && $status == 141 && $try < 3;
        Test::More::diag("mpiexec died of SIGPIPE (its proxies' race); "
                         . "running it again: @command");
    }
    my $out = defined $opt{stdout} ? '' : slurp("$dir/out") // '';
    return ($status, $out, slurp("$dir/err") // '');
}

# The command line that runs COMMAND on N ranks under MPICH's mpiexec,
# for run() or refused(): run(mpiexec(2, $minigpt, '--dp', 2)). The ranks
# are not bound to cores: the tests check results, never speed (the book's
# timed runs bind them), and run more ranks than a small machine has cores,
# which MPICH allows. The whole is stopped after $FleetTest::MPI_SECONDS, so
# that a hang fails with status 124 (timed out) instead of hanging the suite;
# a rank that crashes makes mpiexec's status non-zero.
our $MPI_SECONDS = 300;
sub mpiexec {
    my ($ranks, @command) = @_;
    return mpi_turn($ranks, 'timeout', '-k', '10', $MPI_SECONDS, 'mpiexec',
                    '-n', $ranks, @command);
}

# COMMAND, which starts RANKS ranks, made to wait its turn: prove runs two
# test files at once, and MPICH's ranks poll while they wait for a message,
# so the ranks of two runs that together outnumber the cores starve each
# other (every step of a ring waits for the scheduler to give a peer back
# its core). A run of more ranks than half the cores holds build/mpi.lock
# alone; smaller runs share it, so that two of them, which fit the cores
# together, still overlap; one rank takes no turn. The wait is outside
# mpiexec()'s time limit, and a test waiting its turn uses no core.
# run(mpi_turn(4, 'make', 'lab-ring')) for a command that calls mpiexec.
my $cores;
sub mpi_turn {
    my ($ranks, @command) = @_;
    my $build = root() . '/build';
    return @command if $ranks <= 1 || !-d $build;
    chomp($cores = `nproc` || 1) unless defined $cores;
    return ('flock', 2 * $ranks > $cores ? '--exclusive' : '--shared',
            "$build/mpi.lock", @command);
}

# Run COMMAND with --json and decode what it printed; die (a failed test)
# if it fails or prints no JSON.
sub json_of {
    my @command = @_;
    my ($status, $out, $err) = run(@command, '--json');
    die "@command --json exited $status: $err" if $status != 0;
    return JSON::PP::decode_json($out);
}

# Run build/bin/fleet with --json and decode what it printed.
sub fleet_json { return json_of(root() . '/build/bin/fleet', @_) }

# |got - want| <= rtol * |want|, reporting both values on failure.
sub close_to {
    my ($got, $want, $rtol, $name) = @_;
    my $ok = defined $got && abs($got - $want) <= $rtol * abs($want);
    Test::More::ok($ok, $name)
      or Test::More::diag(sprintf "got %s, want %s (relative tolerance %g)",
                          $got // 'undef', $want, $rtol);
    return $ok;
}

# A count that should be whole, rounded up: a quotient within a relative
# 1e-9 of a whole number is that number (80e9 x 0.8 is not exactly 64e9 in
# binary, and 1.6e12 / 64e9 must be 25, not 26); anything else rounds up.
sub round_up {
    my ($x) = @_;
    my $nearest = POSIX::floor($x + 0.5);
    return abs($x - $nearest) <= 1e-9 * abs($x) ? $nearest : POSIX::ceil($x);
}

# A whole number with thousands separators, as the book prints counts:
# 16384 -> 16,384.
sub grouped {
    my $s = sprintf('%.0f', $_[0]);
    1 while $s =~ s/^(-?\d+)(\d{3})/$1,$2/;
    return $s;
}

# A JSON field's name as a macro spells it: bytes_per_device -> BytesPerDevice.
sub camel { return join '', map { ucfirst } split /_/, $_[0] }

# The lines of a text: how many newlines it holds (for refused).
sub line_count { my $n = () = ($_[0] // '') =~ /\n/g; return $n }

# A PDF's text, as UTF-8 bytes, laid out as on the page; with layout => 0,
# in reading order instead (one heading a line, paragraphs unbroken by
# columns). Dies if pdftotext fails. The laid-out text of the book, which
# takes seconds to extract, is the one make extracted (build/book.txt),
# unless the PDF is newer.
sub pdf_text {
    my ($pdf, %opt) = @_;
    my @layout = ($opt{layout} // 1) ? ('-layout') : ();
    (my $extracted = $pdf) =~ s/\.pdf$/.txt/;
    if (@layout && $extracted ne $pdf && -f $extracted && -f $pdf
        && (Time::HiRes::stat($extracted))[9] >= (Time::HiRes::stat($pdf))[9]) {
        my $text = slurp($extracted);
        return $text if defined $text && $text ne '';
    }
    my ($status, $text, $err) = run('pdftotext', @layout, '-enc', 'UTF-8',
                                    $pdf, '-');
    die "pdftotext $pdf failed ($status): $err" if $status != 0;
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
# with its unit applied. Handles 1,023 and 0.9766 and -0.626 and 25\,GB and
# 388\,ms and 40\,\% and
# \ensuremath{1.23\times10^{15}}; returns () for anything else.
my %unit = (B => 1, kB => 1e3, MB => 1e6, GB => 1e9, TB => 1e12, PB => 1e15,
            '%' => 1, s => 1, ms => 1e-3, '\\ensuremath{\\mu}s' => 1e-6,
            min => 60, h => 3600, days => 86400);
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

# The exercises of a chapter's exercise file (LaTeX): the text of each
# top-level \item of its enumerate, comments removed, in order. Dies if the
# file cannot be read or its enumerates do not balance.
sub exercise_items {
    my ($path) = @_;
    my $tex = slurp($path) // die "$path: cannot read it\n";
    $tex =~ s/(?<!\\)%.*$//mg;
    my ($depth, $start, @items) = (0, undef);
    while ($tex =~ /\\begin\{enumerate\}|\\end\{enumerate\}|\\item\b/g) {
        my ($token, $from, $to) = ($&, $-[0], $+[0]);
        if ($token =~ /begin/) {
            $depth++;
        } elsif ($depth == 1) {               # an item, or the list's end
            push @items, substr($tex, $start, $from - $start) if defined $start;
            $start = $token =~ /end/ ? undef : $to;
            $depth-- if $token =~ /end/;
        } elsif ($token =~ /end/) {
            $depth--;
        }
    }
    die "$path: its enumerates do not balance\n" if $depth != 0;
    return @items;
}

# A refusal, as every tool makes one: exit status 2, nothing on standard
# output, and one line on standard error that says why: it must match MUST,
# a pattern, or name MUST, a flag given as a string. COMMAND runs as given
# (under mpiexec() too: one line for all ranks, and no hang). Returns the line.
sub refused {
    my ($name, $must, @command) = @_;
    local $Test::Builder::Level = $Test::Builder::Level + 1;
    my ($status, $out, $err) = run(@command);
    Test::More::is($status, 2, "$name: exit status 2")
      or Test::More::diag($status == 124 ? 'timed out' : $err);
    Test::More::is($out, '', "$name: nothing on stdout");
    Test::More::is(line_count($err), 1, "$name: one line on stderr")
      or Test::More::diag($err);
    my $pattern = ref $must eq 'Regexp' ? $must : qr/\Q$must\E/;
    Test::More::like($err, $pattern, ref $must eq 'Regexp'
                     ? "$name: the line says why" : "$name: the line names $must");
    return $err;
}

# The same, with --output into a fresh folder appended: and no output file
# (nor a temporary one) is left there.
sub refused_no_output {
    my ($name, $must, @command) = @_;
    local $Test::Builder::Level = $Test::Builder::Level + 1;
    my $dir = File::Temp::tempdir(CLEANUP => 1);
    my $err = refused($name, $must, @command, '--output', "$dir/out.txt");
    Test::More::is_deeply([files_in($dir)], [], "$name: no output file");
    return $err;
}

# minigpt --verify's verdict in OUT, which must end in OK, printed once (by
# rank 0 alone), and hold each printed difference to the tolerance it
# states, atol + rtol x the largest |reference|. LARGEST gives that largest
# |reference| for the loss (loss => ...) and the gradients (grad => ...);
# after one AdamW step from the same gradient the weights must agree to
# atol alone and the moments to 1e-12. Returns the numbers printed:
# dloss, dgrad, dweight, dmoment, atol, rtol; or undef.
sub verify_ok {
    my ($name, $out, %largest) = @_;
    local $Test::Builder::Level = $Test::Builder::Level + 1;
    my $verdict = join '\n',
        'verify: max \|dloss\| = (\S+), max \|dgrad\| = (\S+)',
        'verify: after one AdamW step, max \|dweight\| = (\S+), '
          . 'max \|dmoment\| = (\S+)',
        'verify: tolerance (\S+) \+ (\S+)·\|reference\|, '
          . 'moments (\S+)·\|reference\|: OK';
    my @v = ($out // '') =~ /^$verdict$/m;
    Test::More::ok(scalar @v, "$name: the verdict is OK") or do {
        Test::More::diag($out // '');
        return undef;
    };
    my %v;
    @v{qw(dloss dgrad dweight dmoment atol rtol)} = @v;
    Test::More::is(scalar(() = $out =~ /^verify: max/mg), 1,
                   "$name: printed once, by rank 0");
    for my $kind (grep { exists $largest{$_} } qw(loss grad)) {
        my $d = $v{"d$kind"};
        Test::More::cmp_ok($d, '<=', $v{atol} + $v{rtol} * $largest{$kind},
                           "$name: max |d$kind| = $d within "
                           . "atol + rtol x $largest{$kind}");
    }
    Test::More::cmp_ok($v{dweight}, '<=', $v{atol},
                       "$name: one AdamW step from the same gradient, "
                       . "max |dweight| = $v{dweight} within atol");
    Test::More::cmp_ok($v{dmoment}, '<=', 1e-12,
                       "$name: ... and the same moments, max |dmoment| = $v{dmoment}");
    return \%v;
}

# ------------------------------------------- a chapter's worked solutions --
# The checks that end every chapter's solutions test (07 on), after `make`.

# The chapter's solution (SOLUTION, LaTeX, relative to the root) uses only
# the macros its script defined (MACROS; those whose names start with
# PREFIX) and inputs only files the script wrote; it shows at least
# TRANSCRIPTS transcripts, all written, and with WIDTH, none has a line
# longer than WIDTH characters. Returns the solution's text, comments
# removed.
sub solution_sources_ok {
    my (%a) = @_;
    local $Test::Builder::Level = $Test::Builder::Level + 1;
    my $root = root();
    my $tex = slurp("$root/$a{solution}") // '';
    (my $code = $tex) =~ s/(?<!\\)%.*$//mg;
    my %used = map { $_ => 1 } $code =~ /\\(\Q$a{prefix}\E\w+)/g;
    my @missing = grep { !exists $a{macros}{$_} } sort keys %used;
    Test::More::is_deeply(\@missing, [],
                          'the solution uses only macros the script defines');
    my @inputs = $code =~ /\\input\{(build\/solutions\/[^}]+)\}/g;
    my @absent = grep { !-s "$root/$_" } @inputs;
    Test::More::is_deeply(\@absent, [],
                          'every file the solution inputs was written');
    my @verbatim = $code =~ /\{(build\/solutions\/[^}]+\.txt)\}/g;
    Test::More::ok(@verbatim >= $a{transcripts},
                   'the solution shows the transcripts of its runs');
    Test::More::ok(!(grep { !-s "$root/$_" } @verbatim),
                   'every transcript it shows was written');
    if (defined $a{width}) {
        my @long = grep { length > $a{width} }
                   map { split /\n/, slurp("$root/$_") // '' } @verbatim;
        Test::More::is_deeply(\@long, [], 'every transcript line fits the '
                              . "measure ($a{width} characters)");
    }
    return $code;
}

# The chapter's exercise file (EXERCISES, relative to the root): a section
# of plain LaTeX (no noweb quoting), at least six exercises, each worked
# once in SOLUTION (a \HEADING{N} line each), and, with LAB, the make
# command that grades the lab (LaTeX's escapes allowed). Returns the
# statements' text, comments removed, and the exercises (exercise_items).
sub exercise_file_ok {
    my (%a) = @_;
    local $Test::Builder::Level = $Test::Builder::Level + 1;
    my $root = root();
    my $statements = slurp("$root/$a{exercises}") // '';
    (my $text = $statements) =~ s/(?<!\\)%.*$//mg;
    Test::More::like($text, qr/\\section\{Exercises\}/, 'exercises: a section');
    Test::More::unlike($text, qr/\[\[/,
                       'exercises: no noweb quoting (the file is plain LaTeX)');
    my @items = exercise_items("$root/$a{exercises}");
    Test::More::cmp_ok(scalar @items, '>=', 6,
                       'exercises: at least six (' . @items . ')');
    my $solution = slurp("$root/$a{solution}") // '';
    my $sections = () = $solution =~ /^\\\Q$a{heading}\E\{\d+\}/mg;
    Test::More::is($sections, scalar @items,
                   'exercises: the solutions work every one');
    if (defined $a{lab}) {
        (my $pattern = quotemeta $a{lab}) =~ s/_/\\\\?_/g;   # \_ in LaTeX
        Test::More::like($text, qr/$pattern/, 'exercises: the lab is announced');
    }
    return ($text, @items);
}

# The statements (TEXT, comments removed) give no answer away: no macro of
# NAMES that MACROS defines stands in them as printed (a closing \,\%
# dropped; thin spaces, ties and {,} read as the separators they print).
sub answers_not_given_away {
    my ($text, $macros, @names) = @_;
    local $Test::Builder::Level = $Test::Builder::Level + 1;
    (my $flat = $text) =~ s/\{,\}|\\,|~/ /g;
    $flat =~ s/(\d) (\d{3})(?!\d)/$1,$2/g;
    for my $name (@names) {
        my $answer = $macros->{$name} // next;
        $answer =~ s/\\,\\%$//;
        Test::More::ok($flat !~ /(?<![\d.,])\Q$answer\E(?![\d])/,
                       "exercises: the answer $answer (\\$name) is not given away");
    }
}

# build/solutions.pdf, woven from solutions/solutions.tex, which must input
# the chapter's SOLUTION: no unresolved reference; after the chapter's TITLE,
# a heading "Exercise C.N" for each of the ITEMS exercises of chapter C; and
# the section of each exercise N in KEY prints KEY's text (a closing \,\%
# dropped). With NEWER_THAN (a file the solution script wrote), the PDF's
# checks are skipped while the PDF is older than that file.
sub solutions_pdf_ok {
    my (%a) = @_;
    local $Test::Builder::Level = $Test::Builder::Level + 1;
    my $root = root();
    my ($c, $pdf) = ($a{chapter}, "$root/build/solutions.pdf");
    my %key = %{ $a{key} // {} };
    my $master = slurp("$root/solutions/solutions.tex") // '';
    Test::More::like($master, qr/^\s*\\input\{\Q$a{solution}\E\}/m,
                     "solutions: solutions/solutions.tex inputs chapter $c");
    SKIP: {
        Test::More::skip("build/solutions.pdf is older than $a{newer_than}",
                         5 + $a{items} + keys %key)
            if defined $a{newer_than}
               && !(-s $pdf && -M $pdf <= -M $a{newer_than});
        Test::More::ok(-s $pdf, 'solutions: build/solutions.pdf was woven');
        my $body = eval { pdf_text($pdf, layout => 0) };
        Test::More::ok(defined $body, 'solutions: pdftotext reads build/solutions.pdf')
          or Test::More::diag($@);
        $body //= '';
        Test::More::unlike($body, qr/\?\?/, 'solutions: no unresolved references');
        my @chapters = split /^\Q$a{title}\E$/m, $body;
        $body = @chapters > 1 ? $chapters[-1] : '';
        Test::More::ok(length $body, "solutions: the PDF has chapter $c");
        for my $n (1 .. $a{items}) {
            Test::More::like($body, qr/^Exercise \Q$c.$n\E$/m,
                             "solutions: heading Exercise $c.$n");
        }
        my %section;
        my @parts = split /^(Exercise \Q$c\E\.\d+)$/m, $body;
        for (my $i = 1; $i < $#parts; $i += 2) {
            $section{ $parts[$i] } = $parts[$i + 1];
        }
        for my $n (sort { $a <=> $b } keys %key) {
            (my $want = $key{$n}) =~ s/\\,\\%$//;
            Test::More::like($section{"Exercise $c.$n"} // '',
                             qr/(?<![\d,])\Q$want\E(?![\d])/,
                             "solutions: Exercise $c.$n prints $want");
        }
    }
}

# Write TEXT to PATH (a file a test makes, such as a broken copy of a lab's
# solution); die if it cannot.
# An mpiexec for replaying a run script: it drops -n and -bind-to and runs
# the program once, in this process's place.
sub mpiexec_stand_in {
    my ($path) = @_;
    write_file($path, "#!/bin/sh\nwhile [ \$# -gt 0 ]; do case \"\$1\" in\n"
               . "  -n|-bind-to) shift 2 ;; *) break ;; esac; done\n"
               . "exec \"\$@\"\n");
    chmod 0755, $path or die "$path: $!";
}

sub write_file {
    my ($path, $text) = @_;
    open(my $fh, '>', $path) or die "$path: $!";
    print $fh $text;
    close $fh or die "$path: $!";
}

# A lab's make TARGET is documented: README (relative to the root) says how
# to grade FILE with it, and the Makefile lists it in its header and
# declares it phony. Returns the README's text.
sub lab_documented {
    my (%a) = @_;
    local $Test::Builder::Level = $Test::Builder::Level + 1;
    my $root = root();
    my $readme = slurp("$root/$a{readme}") // '';
    Test::More::like($readme, qr/\Qmake $a{target} LAB=$a{file}\E/,
                     'README says how to grade');
    my $makefile = slurp("$root/Makefile") // '';
    Test::More::like($makefile, qr/^#   make \Q$a{target}\E LAB=file\.c$/m,
                     "the Makefile's header lists $a{target}");
    Test::More::like($makefile,
                     qr/^\.PHONY:(?:[^\n]*\\\n)*[^\n]*\b\Q$a{target}\E\b/m,
                     "$a{target} is phony");
    return $readme;
}

# Two checkpoints (directories of a manifest and shards) compared file by
# file: the same names, and each file the same bytes. Both must hold a
# manifest, so that two checkpoints no run wrote cannot pass.
sub compare_checkpoints {
    my ($want_same, $x, $y, $name) = @_;
    local $Test::Builder::Level = $Test::Builder::Level + 2;
    my @missing = grep { !-f "$_/manifest" } $x, $y;
    if (@missing) {
        Test::More::ok(0, $name);
        Test::More::diag("no checkpoint: @missing");
        return 0;
    }
    my @in_x = files_in($x);
    my @in_y = files_in($y);
    my @differ = grep { (slurp("$x/$_") // '') ne (slurp("$y/$_") // '') }
                 @in_x;
    my $same = "@in_x" eq "@in_y" && !@differ;
    my $ok = $want_same ? $same : !$same;
    Test::More::ok($ok, $name)
      or Test::More::diag("$x: @in_x; $y: @in_y; differing: @differ");
    return $ok;
}
# Mutants, to show that a check can fail: a program linked as make links
# TARGET (build/bin/NAME), with one of its objects compiled from a changed
# copy of its source. link_recipe(TARGET) gives the build's C flags and
# make's link line for TARGET, and checks that both were found (make
# check-sanitize builds the objects with SANITIZE=1: so is the link).
sub link_recipe {
    my ($target) = @_;
    local $Test::Builder::Level = $Test::Builder::Level + 1;
    my $root = root();
    my ($flags) = (slurp("$root/build/obj/cflags") // '') =~ /^\S+\s+(.*)$/;
    my @sanitized = ($flags // '') =~ /-fsanitize/ ? ('SANITIZE=1') : ();
    my (undef, $make) = run('make', '-n', '-B', '-C', $root, @sanitized,
                            '--no-print-directory', $target);
    my ($line) = grep { /-o \Q$target\E$/ } split /\n/, $make;
    Test::More::ok(defined $flags && defined $line,
                   'the build\'s flags and link line')
      or Test::More::diag($make);
    return ($flags // '', $line // '');
}

# build_mutant({ recipe => [link_recipe(TARGET)], target => TARGET,
# object => its object, source => the object's source, name => NAME,
# from => REGEX, to => TEXT, dir => a scratch folder }): the source with
# FROM replaced by TO, compiled (warnings not errors: a mistake can leave a
# variable unused) and linked in the object's place; checks each step and
# returns the program's path.
sub build_mutant {
    my ($m) = @_;
    local $Test::Builder::Level = $Test::Builder::Level + 1;
    my $root = root();
    my ($flags, $link_line) = @{ $m->{recipe} };
    my $source = slurp("$root/$m->{source}") // '';
    (my $mutated = $source) =~ s/$m->{from}/$m->{to}/;
    (my $base = $m->{source}) =~ s{.*/}{};
    Test::More::isnt($mutated, $source, "$m->{name}: $base is changed");
    (my $file = "$m->{dir}/$m->{name}.c") =~ s/ /-/g;
    write_file($file, $mutated);
    (my $object = $file) =~ s/\.c$/.o/;
    (my $program = $file) =~ s/\.c$//;
    (my $include = "$root/$m->{source}") =~ s{/[^/]*$}{};
    my ($status, undef, $err) = run('sh', '-c', "mpicc $flags -Wno-error "
        . "-I$include -c '$file' -o '$object'");
    Test::More::is($status, 0, "$m->{name}: compiles")
      or Test::More::diag($err);
    (my $line = $link_line) =~ s{\Q$m->{object}\E}{'$object'};
    $line =~ s{-o \Q$m->{target}\E$}{-o '$program'};
    ($status, undef, $err) = run('sh', '-c', "cd $root && $line");
    Test::More::is($status, 0, "$m->{name}: links")
      or Test::More::diag($err);
    return $program;
}

# The tensor axis's traffic that a minigpt report R counts per block per
# micro-batch, against Chapter 9's formula: four all-reduces of b·s·h
# elements (with sequence parallelism eight collectives, each all-reduce a
# reduce-scatter and an all-gather; none on one rank), 8bsh(t-1)/t
# elements' bytes by each rank, which the report also states. ARGS: t,
# bsh (one micro-batch's b·s·h), sp (sequence parallel, default 0), word
# (bytes of a number, default 4) and name.
sub tp_block_counts_ok {
    my ($r, %a) = @_;
    my ($t, $sp, $word, $name) = (@a{qw(t sp word name)});
    my $formula = 8 * $a{bsh} * ($t - 1) / $t * ($word // 4);
    my $collectives = $t == 1 ? 0 : $sp ? 8 : 4;
    Test::More::is($r->{tp_collectives_per_block}, $collectives,
                   "$name: $collectives collectives per block per "
                   . 'micro-batch');
    Test::More::is($r->{tp_bytes_per_block}, $formula,
                   "$name: the bytes counted are 8bsh(t-1)/t elements' "
                   . "($formula B)");
    Test::More::is($r->{tp_bytes_per_block_formula}, $formula,
                   "$name: ... and the report states the formula's");
}

# Two reports, GOT (say the GPU's) and WANT (the CPU trainer's), count the
# same collectives and bytes per block per micro-batch.
sub same_tp_counts_ok {
    my ($got, $want, $name) = @_;
    Test::More::is($got->{tp_collectives_per_block},
                   $want->{tp_collectives_per_block},
                   "$name: as many collectives as the CPU trainer's");
    Test::More::is($got->{tp_bytes_per_block}, $want->{tp_bytes_per_block},
                   "$name: the same bytes as the CPU trainer's");
}

# The report R (decoded JSON, or undef) of minigpt --device cuda --verify
# on a model of L layers: it passes; in fp32 every difference is within
# 1e-6 + 1e-4 (the reference's own tolerance; the gradients are below 1);
# in bf16 within the stated (4L + 1)·2u and (8L + 3)·2u, u = 2^-8, and not
# zero, since the GEMMs' inputs were rounded; the step's weights agree to
# 1e-5. Returns whether R passed.
sub gpu_verify_ok {
    my ($name, $r, $L) = @_;
    local $Test::Builder::Level = $Test::Builder::Level + 1;
    my $u = 2**-8;
    Test::More::ok($r && $r->{result} eq 'OK', "$name: --verify passes")
      or Test::More::diag(Test::More::explain($r));
    return 0 unless $r;
    if ($r->{precision} eq 'fp32') {
        Test::More::cmp_ok($r->{max_dgrad}, '<=', 1e-6 + 1e-4,
            "$name: max |dgrad| $r->{max_dgrad} within 1e-6 + 1e-4");
        Test::More::cmp_ok($r->{max_dloss}, '<=', $r->{loss_tolerance},
            "$name: max |dloss| $r->{max_dloss} within tolerance");
    } else {
        close_to($r->{grad_tolerance}, (8 * $L + 3) * 2 * $u, 1e-12,
                 "$name: gradient tolerance (8L + 3)·2u");
        close_to($r->{loss_tolerance}, (4 * $L + 1) * 2 * $u, 1e-12,
                 "$name: loss tolerance (4L + 1)·2u");
        Test::More::ok($r->{relative_dgrad_norm} > 0
                       && $r->{relative_dgrad_norm} <= $r->{grad_tolerance},
            "$name: |dgrad|/|grad| = $r->{relative_dgrad_norm}, not 0 and "
            . 'within its tolerance');
        Test::More::ok($r->{relative_dloss} <= $r->{loss_tolerance},
            "$name: |dloss|/loss = $r->{relative_dloss} within tolerance");
    }
    Test::More::cmp_ok($r->{max_dweight}, '<=', 1e-5,
        "$name: the step's weights agree ($r->{max_dweight})");
    return $r->{result} eq 'OK';
}

sub same_checkpoints      { return compare_checkpoints(1, @_) }
sub different_checkpoints { return compare_checkpoints(0, @_) }

1;
