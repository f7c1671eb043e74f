package io.tidelog.broker.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.etcd.jetcd.options.LeaseOption;
import io.tidelog.broker.EtcdServer;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CrashDetectorTest {
  @TempDir Path dir;

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

  /**
   * A killed process's connection can close before its listening socket does: the check that the
   * closed connection starts may still find the port open, and must not give up on that alone.
   */
  @Test
  void aPortThatClosesSoonAfterTheConnectionEndsTheSession() throws Exception {
    try (EtcdServer etcd = EtcdServer.start(dir);
        MetadataStore store = MetadataStore.connect(List.of(etcd.endpoint()), "crash");
        CrashDetector detector = new CrashDetector(store, 0)) {
      ServerSocket listening = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
      BrokerInfo peer = peer(listening.getLocalPort());
      AtomicLong lease = new AtomicLong();
      try (BrokerRegistration registration = registration(store, peer, lease)) {
        registration.register();
        detector.connectionLost(peer, "127.0.0.1", listening.getLocalPort());
        listening.setSoTimeout(10_000);
        listening.accept().close(); // the first check finds it listening
        listening.close();

        await().atMost(Duration.ofSeconds(10)).until(() -> detector.revoked() == 1);
        assertThat(ttl(store, lease.get())).as("the peer's lease (-1: gone)").isNegative();
      }
    }
  }

  @Test
  void aPortThatStaysOpenKeepsTheSession() throws Exception {
    try (EtcdServer etcd = EtcdServer.start(dir);
        MetadataStore store = MetadataStore.connect(List.of(etcd.endpoint()), "crash");
        CrashDetector detector = new CrashDetector(store, 0);
        ServerSocket listening = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      BrokerInfo peer = peer(listening.getLocalPort());
      AtomicLong lease = new AtomicLong();
      try (BrokerRegistration registration = registration(store, peer, lease)) {
        registration.register();
        detector.connectionLost(peer, "127.0.0.1", listening.getLocalPort());
        assertThat(detector.checks(peer.id())).isTrue();

        await().atMost(Duration.ofSeconds(10)).until(() -> !detector.checks(peer.id()));
        assertThat(detector.revoked()).isZero();
        assertThat(ttl(store, lease.get())).isPositive();
      }
    }
  }

  private static BrokerInfo peer(int port) {
    return new BrokerInfo(
        1, List.of(new BrokerInfo.Endpoint("PLAINTEXT", "127.0.0.1", port)), null, "one", false);
  }

  private static BrokerRegistration registration(
      MetadataStore store, BrokerInfo peer, AtomicLong lease) {
    return new BrokerRegistration(store, peer, 30_000, lease::set, () -> {}, () -> {});
  }

  private static long ttl(MetadataStore store, long lease) {
    return MetadataStore.get(store.client().getLeaseClient().timeToLive(lease, LeaseOption.DEFAULT))
        .getTTL();
  }
}
