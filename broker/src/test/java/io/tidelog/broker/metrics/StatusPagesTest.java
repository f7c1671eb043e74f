package io.tidelog.broker.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** /status and /lag name topics, groups and replica state: only loopback clients see them. */
class StatusPagesTest {
  @Test
  void onlyLoopbackClientsSeeTheStatusPagesUnlessRemoteOnesAreEnabled() {
    assertThat(HttpEndpoints.statusAllowed(false, "127.0.0.1")).isTrue();
    assertThat(HttpEndpoints.statusAllowed(false, "127.0.0.7")).isTrue();
    assertThat(HttpEndpoints.statusAllowed(false, "0:0:0:0:0:0:0:1")).isTrue();
    assertThat(HttpEndpoints.statusAllowed(false, "10.1.2.3")).isFalse();
    assertThat(HttpEndpoints.statusAllowed(false, "2001:db8::1")).isFalse();
    assertThat(HttpEndpoints.statusAllowed(true, "10.1.2.3")).isTrue();
  }
}
