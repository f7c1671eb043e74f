package io.tidelog.broker.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.ServerSocket;
import org.junit.jupiter.api.Test;

class CrashDetectorTest {
  @Test
  void onlyAPortThatNothingListensOnRefuses() throws Exception {
    int port;
    // A listening socket that never accepts, as a paused process's: the kernel completes the
    // handshake, so it does not refuse
    try (ServerSocket listening = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      port = listening.getLocalPort();
      assertThat(CrashDetector.refuses("127.0.0.1", port)).isFalse();
    }
    // once closed, as a killed process's, it refuses
    assertThat(CrashDetector.refuses("127.0.0.1", port)).isTrue();
  }
}
