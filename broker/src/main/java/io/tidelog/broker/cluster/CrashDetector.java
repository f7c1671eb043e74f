package io.tidelog.broker.cluster;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.etcd.jetcd.KeyValue;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ends the session of a broker whose process died, without waiting for etcd to expire its lease
 * (issue 25). A broker whose connection with a peer broke (a follower's to its leader, a leader's
 * from its follower) asks it to check: when the peer's advertised port refuses new connections
 * {@value #PROBES} times in a row, {@value #PROBE_INTERVAL_MS} ms apart, within {@value #ATTEMPTS}
 * attempts, no process listens there any more, and the lease of the registration that peer made
 * (the same incarnation) is revoked. That removes its registration and any controller election key
 * on it, and the controller moves its leaderships at once, as after an expired session. The first
 * attempts may still find the port open: a killed process's sockets close one by one as the kernel
 * tears it down, so its leader can see the connection close before the listening socket does.
 *
 * <p>Only an established connection that the peer's end closed or reset, followed by refused new
 * ones, is evidence: a broker that is paused, or that the network drops, neither closes nor
 * refuses, its connections time out, and its session decides as before. A broker that serves
 * listens on the port it advertises, so it never refuses there. A network that rejects (resets)
 * both the established and the new connections of a live broker would look like its crash;
 * Kubernetes NetworkPolicies drop such traffic, they do not reject it.
 *
 * <p>Bounded: one check per peer at a time, on one thread, so at most one per broker of the
 * cluster. Thread-safe.
 */
public final class CrashDetector implements AutoCloseable {
  static final int PROBES = 3;
  static final int ATTEMPTS = 10;
  static final long PROBE_INTERVAL_MS = 100;
  private static final int CONNECT_TIMEOUT_MS = 500;
  private static final Logger LOG = LoggerFactory.getLogger(CrashDetector.class);

  private final MetadataStore store;
  private final int localId;
  private final Set<Integer> checking = ConcurrentHashMap.newKeySet();
  private final LongAdder revoked = new LongAdder();
  private final ScheduledExecutorService executor =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread thread = new Thread(r, "tidelog-crash-detector");
            thread.setDaemon(true);
            return thread;
          });

  public CrashDetector(MetadataStore store, int localId) {
    this.store = store;
    this.localId = localId;
  }

  /**
   * Tells that a connection with broker {@code peerId} broke, one that it made: checks its endpoint
   * on {@code listener}, as registered now.
   */
  public void connectionLost(int peerId, String listener) {
    BrokerInfo peer = store.image().brokers().get(peerId);
    if (peer != null) {
      peer.endpoint(listener).ifPresent(e -> connectionLost(peer, e.host(), e.port()));
    }
  }

  /**
   * Tells that a connection to {@code peer}, as registered then, on its endpoint {@code
   * host}:{@code port}, broke.
   */
  public void connectionLost(BrokerInfo peer, String host, int port) {
    if (peer.id() == localId || !checking.add(peer.id())) {
      return;
    }
    try {
      executor.execute(() -> probe(peer, host, port, 1, 0));
    } catch (RejectedExecutionException e) {
      checking.remove(peer.id()); // closing
    }
  }

  /** How many crashed brokers' sessions this broker ended. */
  public long revoked() {
    return revoked.sum();
  }

  /**
   * The {@code attempt}th check of {@code peer}'s port, after {@code refusals} refusals in a row.
   */
  private void probe(BrokerInfo peer, String host, int port, int attempt, int refusals) {
    try {
      int refused = refuses(host, port) ? refusals + 1 : 0;
      if (refused == PROBES) {
        revoke(peer, host, port);
        checking.remove(peer.id());
      } else if (attempt < ATTEMPTS && refused + ATTEMPTS - attempt >= PROBES) {
        executor.schedule(
            () -> probe(peer, host, port, attempt + 1, refused),
            PROBE_INTERVAL_MS,
            TimeUnit.MILLISECONDS);
      } else {
        checking.remove(peer.id()); // it listens: alive, or paused
      }
    } catch (RuntimeException e) { // etcd unreachable, or closing: the session decides
      LOG.warn("Checking whether broker {} crashed failed: {}", peer.id(), e.toString());
      checking.remove(peer.id());
    }
  }

  /** Whether a check of broker {@code peerId} runs now. */
  boolean checks(int peerId) {
    return checking.contains(peerId);
  }

  /** Whether nothing listens on {@code host}:{@code port}: the connection is refused. */
  static boolean refuses(String host, int port) {
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress(host, port), CONNECT_TIMEOUT_MS);
      return false;
    } catch (ConnectException e) { // also "Network is unreachable": only a refusal counts
      return e.getMessage() != null && e.getMessage().contains("refused");
    } catch (IOException e) { // a timeout, or no route: not evidence of a dead process
      return false;
    }
  }

  private void revoke(BrokerInfo peer, String host, int port) {
    List<KeyValue> registered =
        MetadataStore.get(
                store.client().getKVClient().get(store.key(ClusterImage.BROKERS + peer.id())))
            .getKvs();
    if (registered.isEmpty()) {
      return; // its session ended already
    }
    KeyValue registration = registered.get(0);
    String incarnation =
        new JsonObject(registration.getValue().toString(UTF_8)).getString("incarnation");
    if (!peer.incarnation().equals(incarnation)) {
      return; // it started again since, and registered anew
    }
    LOG.warn(
        "Broker {} refuses connections on {}:{} after its connection broke: its process is gone;"
            + " ending its session (lease {}) so that its partitions fail over now",
        peer.id(),
        host,
        port,
        Long.toHexString(registration.getLease()));
    MetadataStore.get(store.client().getLeaseClient().revoke(registration.getLease()));
    revoked.increment();
  }

  @Override
  public void close() {
    executor.shutdownNow();
  }
}
