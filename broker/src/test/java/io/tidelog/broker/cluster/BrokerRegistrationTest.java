package io.tidelog.broker.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.etcd.jetcd.options.LeaseOption;
import io.tidelog.broker.EtcdServer;
import io.tidelog.broker.TcpProxy;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A broker cut off from etcd (but not from its clients) stops leading before etcd can expire its
 * lease, so that it never leads beside the broker the controller chose instead; in touch again it
 * leads again on the same lease, or registers anew if the lease expired.
 */
class BrokerRegistrationTest {
  private static final long SESSION_MS = 3_000;
  @TempDir Path dir;
  private final List<String> events = new CopyOnWriteArrayList<>();
  private final AtomicLong lease = new AtomicLong();

  /**
   * The lease's time to live in etcd, asked right after the broker stepped down: -1 once etcd
   * expired it, {@code Long.MIN_VALUE} until it was asked.
   */
  private final AtomicLong ttlAtStepDown = new AtomicLong(Long.MIN_VALUE);

  private EtcdServer etcd;
  private TcpProxy proxy;
  private MetadataStore direct;

  @BeforeEach
  void startEtcd() throws Exception {
    etcd = EtcdServer.start(dir);
    proxy = TcpProxy.start(URI.create(etcd.endpoint()).getPort());
    direct = MetadataStore.connect(List.of(etcd.endpoint()), "session");
  }

  private BrokerRegistration registration(MetadataStore store) {
    return new BrokerRegistration(
        store,
        new BrokerInfo(
            1,
            List.of(new BrokerInfo.Endpoint("PLAINTEXT", "127.0.0.1", 9092)),
            null,
            "incarnation",
            false),
        SESSION_MS,
        id -> {
          lease.set(id);
          events.add("registered");
        },
        () -> {
          events.add("stepped down");
          ttlAtStepDown.set(ttl(lease.get()));
        },
        () -> events.add("resumed"));
  }

  private long ttl(long id) {
    return MetadataStore.get(direct.client().getLeaseClient().timeToLive(id, LeaseOption.DEFAULT))
        .getTTL();
  }

  @Test
  void heldBrieflyItStepsDownBeforeItsLeaseCanExpireAndLeadsAgainOnTheSameLease() throws Exception {
    try (MetadataStore viaProxy =
            MetadataStore.connect(List.of("http://127.0.0.1:" + proxy.port()), "session");
        BrokerRegistration registration = registration(viaProxy)) {
      registration.register();
      long first = lease.get();

      // A partition that drops packets: the connection stays open, so once healed the keep-alives
      // go through at once (after a cut the client would first reconnect, with gRPC's backoff)
      proxy.hold();
      // The promise: the broker steps down while etcd still holds its lease. The step-down comes
      // a second before the lease could expire (stepDownAfterMs); that second covers the last
      // keep-alive's way back and the watchdog's 200 ms period, so on a loaded machine it holds as
      // long as the watchdog thread is not kept off a CPU for most of that second. A process
      // starved or paused for longer (SIGSTOP, a long GC pause) can step down after the lease
      // expired: docs/faults.md says so. The TTL is asked of etcd after the step-down, so a
      // lease alive then was alive at the step-down.
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> ttlAtStepDown.get() != Long.MIN_VALUE); // set after "stepped down"
      assertThat(events).containsExactly("registered", "stepped down");
      assertThat(ttlAtStepDown.get())
          .as("the lease's TTL in etcd at the step-down (-1: expired)")
          .isNotNegative();

      proxy.restore();
      await().atMost(Duration.ofSeconds(10)).until(() -> events.contains("resumed"));
      assertThat(events).containsExactly("registered", "stepped down", "resumed");
      assertThat(lease.get()).isEqualTo(first);
      assertThat(ttl(first)).isPositive();
    } finally {
      close();
    }
  }

  @Test
  void cutOffPastItsSessionItRegistersAgain() throws Exception {
    try (MetadataStore viaProxy =
            MetadataStore.connect(List.of("http://127.0.0.1:" + proxy.port()), "session");
        BrokerRegistration registration = registration(viaProxy)) {
      registration.register();
      long first = lease.get();

      proxy.cut();
      await().atMost(Duration.ofSeconds(10)).until(() -> ttl(first) < 0);
      proxy.restore();

      await().atMost(Duration.ofSeconds(20)).until(() -> events.size() == 3);
      assertThat(events).containsExactly("registered", "stepped down", "registered");
      assertThat(lease.get()).isNotEqualTo(first);
    } finally {
      close();
    }
  }

  private void close() throws Exception {
    direct.close();
    proxy.close();
    etcd.close();
  }
}
