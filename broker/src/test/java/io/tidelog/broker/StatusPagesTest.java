package io.tidelog.broker;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** /status and /lag name topics, groups and replica state: only loopback clients see them. */
class StatusPagesTest {
  @Test
  void onlyLoopbackClientsSeeTheStatusPagesUnlessRemoteOnesAreEnabled() {
    assertThat(Broker.statusAllowed(false, "127.0.0.1")).isTrue();
    assertThat(Broker.statusAllowed(false, "127.0.0.7")).isTrue();
    assertThat(Broker.statusAllowed(false, "0:0:0:0:0:0:0:1")).isTrue();
    assertThat(Broker.statusAllowed(false, "10.1.2.3")).isFalse();
    assertThat(Broker.statusAllowed(false, "2001:db8::1")).isFalse();
    assertThat(Broker.statusAllowed(true, "10.1.2.3")).isTrue();
  }
}
