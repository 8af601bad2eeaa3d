# tools/html/Browser.pm: a headless Chromium driven through the DevTools
# protocol over a pipe (--remote-debugging-pipe): the browser reads
# commands, JSON each ended by a NUL byte, on its file descriptor 3 and
# writes answers and events on its descriptor 4. No socket, no port, and
# nothing beyond Perl's own modules.
#
#   my $browser = Browser->start(profile => DIR, log => FILE);
#   my @errors = $browser->load('file:///.../index.html');
#       # the errors it logged while it loaded, once its load event fired
#   my $value = $browser->evaluate('document.title');
#   my $png = $browser->screenshot;        # the PNG's bytes
#   $browser->stop;
package Browser;
use strict;
use warnings;
use IO::Select;
use JSON::PP;
use MIME::Base64 qw(decode_base64);
use POSIX ();
use Time::HiRes qw(time);

my $json = JSON::PP->new->utf8->canonical;

# The browser's program: Debian's chromium, or $CHROMIUM.
sub program {
  return $ENV{CHROMIUM} if $ENV{CHROMIUM};
  for my $dir (split /:/, $ENV{PATH} // '') {
    return "$dir/chromium" if -x "$dir/chromium";
  }
  return undef;
}

sub start {
  my ($class, %options) = @_;
  my $program = program() or die "no chromium on PATH\n";
  my $profile = $options{profile} // die "start: profile => DIR\n";
  pipe(my $commands_in, my $commands_out) or die "pipe: $!\n";
  pipe(my $answers_in, my $answers_out) or die "pipe: $!\n";
  my $pid = fork // die "fork: $!\n";
  if ($pid == 0) {
    # The child's descriptors 3 and 4, open across exec.
    my ($read, $write) = (fileno $commands_in, fileno $answers_out);
    my $read_copy = POSIX::dup($read);
    my $write_copy = POSIX::dup($write);
    POSIX::dup2($read_copy, 3) or POSIX::_exit(127);
    POSIX::dup2($write_copy, 4) or POSIX::_exit(127);
    if ($options{log}) {
      open STDOUT, '>', $options{log} or POSIX::_exit(127);
      open STDERR, '>&', \*STDOUT or POSIX::_exit(127);
    }
    open STDIN, '<', '/dev/null';
    no warnings q(exec);
    exec $program, '--headless', '--disable-gpu', '--no-first-run',
      '--no-default-browser-check', '--disable-extensions',
      '--disable-background-networking', '--disable-sync',
      '--hide-scrollbars', '--mute-audio', '--disable-dev-shm-usage',
      ($> == 0 ? '--no-sandbox' : ()),
      "--user-data-dir=$profile", '--remote-debugging-pipe',
      '--window-size=' . ($options{size} // '1000,1400'), 'about:blank';
    POSIX::_exit(127);
  }
  close $commands_in;
  close $answers_out;
  $commands_out->autoflush(1);
  my $self = bless { pid => $pid, out => $commands_out, in => $answers_in,
                     buffer => '', next_id => 1, events => [],
                     timeout => $options{timeout} // 30 }, $class;
  my $target = $self->command('Target.createTarget', { url => 'about:blank' });
  my $attached = $self->command('Target.attachToTarget',
                                { targetId => $target->{targetId},
                                  flatten => JSON::PP::true });
  $self->{session} = $attached->{sessionId};
  $self->command($_) for qw(Page.enable Runtime.enable Log.enable);
  my ($width, $height) = split /,/, $options{size} // '1000,1400';
  $self->command('Emulation.setDeviceMetricsOverride',
                 { width => $width + 0, height => $height + 0,
                   deviceScaleFactor => 1, mobile => JSON::PP::false });
  return $self;
}

# One message from the browser, or undef when none came before the deadline.
sub receive {
  my ($self, $deadline) = @_;
  while (1) {
    my $end = index $self->{buffer}, "\0";
    if ($end >= 0) {
      my $text = substr $self->{buffer}, 0, $end;
      substr($self->{buffer}, 0, $end + 1) = '';
      return $json->decode($text);
    }
    my $left = $deadline - time;
    return undef if $left <= 0;
    my $ready = IO::Select->new($self->{in});
    return undef unless $ready->can_read($left);
    my $got = sysread $self->{in}, my $chunk, 1 << 20;
    die "chromium closed its pipe\n" unless $got;
    $self->{buffer} .= $chunk;
  }
}

# Sends a command (to the page's session once there is one) and waits for
# its answer; events that arrive meanwhile are kept for wait_for.
sub command {
  my ($self, $method, $params) = @_;
  my $id = $self->{next_id}++;
  my %message = (id => $id, method => $method, params => $params // {});
  $message{sessionId} = $self->{session} if $self->{session};
  print { $self->{out} } $json->encode(\%message), "\0";
  my $deadline = time + $self->{timeout};
  while (my $message = $self->receive($deadline)) {
    if (($message->{id} // 0) == $id) {
      die "$method: $message->{error}{message}\n" if $message->{error};
      return $message->{result};
    }
    push @{ $self->{events} }, $message if $message->{method};
  }
  die "$method: no answer in $self->{timeout} s\n";
}

# Waits for the event $method; returns it, or undef after the timeout.
sub wait_for {
  my ($self, $method) = @_;
  my $deadline = time + $self->{timeout};
  while (1) {
    for my $i (0 .. $#{ $self->{events} }) {
      next unless $self->{events}[$i]{method} eq $method;
      return splice @{ $self->{events} }, $i, 1;
    }
    my $message = $self->receive($deadline) // return undef;
    push @{ $self->{events} }, $message if $message->{method};
  }
}

# The page's errors so far, one line each: uncaught exceptions, console
# errors and the browser's own log at level error (a file it could not
# load), and the events read are dropped.
sub errors {
  my ($self) = @_;
  my @errors;
  for my $event (@{ $self->{events} }) {
    my ($method, $p) = ($event->{method}, $event->{params});
    if ($method eq 'Runtime.exceptionThrown') {
      my $d = $p->{exceptionDetails};
      push @errors, 'exception: ' . ($d->{exception}{description} // $d->{text});
    } elsif ($method eq 'Runtime.consoleAPICalled'
             && $p->{type} =~ /^(error|assert)$/) {
      push @errors, "console.$p->{type}: "
        . join ' ', map { $_->{value} // $_->{description} // '' } @{ $p->{args} };
    } elsif ($method eq 'Log.entryAdded' && $p->{entry}{level} eq 'error') {
      push @errors, "log ($p->{entry}{source}): $p->{entry}{text}"
        . ($p->{entry}{url} ? " ($p->{entry}{url})" : '');
    }
  }
  $self->{events} = [];
  return @errors;
}

# Loads $url and waits for its load event; returns the page's errors.
sub load {
  my ($self, $url) = @_;
  $self->{events} = [];
  my $result = $self->command('Page.navigate', { url => $url });
  return ("navigation: $result->{errorText}") if $result->{errorText};
  $self->wait_for('Page.loadEventFired')
    or return ("no load event in $self->{timeout} s");
  # Anything logged while the page loaded arrives before this answer.
  $self->evaluate('1');
  return $self->errors;
}

# The value of a JavaScript expression in the page (a promise is awaited).
sub evaluate {
  my ($self, $expression) = @_;
  my $result = $self->command('Runtime.evaluate',
                              { expression => $expression,
                                returnByValue => JSON::PP::true,
                                awaitPromise => JSON::PP::true });
  die "evaluate: $result->{exceptionDetails}{text}\n"
    if $result->{exceptionDetails};
  return $result->{result}{value};
}

sub screenshot {
  my ($self) = @_;
  my $shot = $self->command('Page.captureScreenshot', { format => 'png' });
  return decode_base64($shot->{data});
}

sub stop {
  my ($self) = @_;
  return unless $self->{pid};
  eval {
    local $self->{session};
    local $self->{timeout} = 5;
    $self->command('Browser.close');
  };
  close $self->{out};
  my $deadline = time + 5;
  while (waitpid($self->{pid}, POSIX::WNOHANG()) == 0) {
    if (time > $deadline) { kill 'KILL', $self->{pid}; waitpid $self->{pid}, 0; last }
    select undef, undef, undef, 0.05;
  }
  delete $self->{pid};
}

sub DESTROY { $_[0]->stop }

1;
