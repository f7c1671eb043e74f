package io.tidelog.broker.cluster;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.etcd.jetcd.lease.LeaseTimeToLiveResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.LeaseOption;
import io.etcd.jetcd.options.PutOption;
import io.etcd.jetcd.support.CloseableClient;
import io.grpc.stub.StreamObserver;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;
import org.apache.kafka.common.errors.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This broker's registration under {@code brokers/<id>}, attached to a lease of {@code
 * broker.session.timeout.ms} that is kept alive. A registration still held by an earlier
 * incarnation (a broker restarted within its session timeout) is waited out, as Kafka refuses a
 * duplicate registration until the old session expires.
 *
 * <p>When the keep-alive stream fails, etcd decides: while it cannot be reached the broker keeps
 * its registration (nobody can act on its absence without etcd either); once etcd reports the lease
 * gone, {@code onLost} runs, the broker stops leading, and it registers again.
 */
public final class BrokerRegistration implements AutoCloseable {
  private static final long RETRY_MS = 500;
  private static final Logger LOG = LoggerFactory.getLogger(BrokerRegistration.class);

  private final MetadataStore store;
  private final BrokerInfo info;
  private final long ttlSeconds;
  private final Runnable onLost;
  private final LongConsumer onRegistered;
  private final ScheduledExecutorService executor =
      Executors.newSingleThreadScheduledExecutor(r -> new Thread(r, "tidelog-registration"));
  private final AtomicLong keepAliveFailures = new AtomicLong();
  private volatile long leaseId;
  private CloseableClient keepAlive;
  private volatile boolean closed;

  /**
   * @param onRegistered called with the lease id after every successful registration
   * @param onLost called when etcd reports the lease gone
   */
  public BrokerRegistration(
      MetadataStore store,
      BrokerInfo info,
      long sessionTimeoutMs,
      LongConsumer onRegistered,
      Runnable onLost) {
    this.store = store;
    this.info = info;
    this.ttlSeconds = Math.max(1, TimeUnit.MILLISECONDS.toSeconds(sessionTimeoutMs));
    this.onRegistered = onRegistered;
    this.onLost = onLost;
  }

  /**
   * Registers, waiting out an earlier incarnation's registration for up to twice the session.
   *
   * @throws TimeoutException when the id stays taken: another live broker has it
   */
  public void register() throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2 * ttlSeconds + 5);
    boolean warned = false;
    while (!tryRegister()) {
      if (System.nanoTime() > deadline) {
        throw new TimeoutException(
            "node.id " + info.id() + " stays registered by another live broker");
      }
      if (!warned) {
        LOG.warn(
            "node.id {} is still registered, by an earlier incarnation or another broker;"
                + " waiting for that session to expire",
            info.id());
        warned = true;
      }
      Thread.sleep(RETRY_MS);
    }
  }

  private boolean tryRegister() {
    long lease = MetadataStore.get(store.client().getLeaseClient().grant(ttlSeconds)).getID();
    TxnResponse response = put(info, lease, Cmp.Op.EQUAL);
    if (!response.isSucceeded()) {
      store.client().getLeaseClient().revoke(lease);
      return false;
    }
    store.awaitRevision(response.getHeader().getRevision());
    leaseId = lease;
    keepAlive = store.client().getLeaseClient().keepAlive(lease, new KeepAliveObserver(lease));
    LOG.info(
        "Broker {} registered with lease {} ({} s)",
        info.id(),
        Long.toHexString(lease),
        ttlSeconds);
    onRegistered.accept(lease);
    return true;
  }

  private final class KeepAliveObserver implements StreamObserver<LeaseKeepAliveResponse> {
    private final long lease;

    KeepAliveObserver(long lease) {
      this.lease = lease;
    }

    @Override
    public void onNext(LeaseKeepAliveResponse response) {}

    @Override
    public void onError(Throwable error) {
      LOG.warn("Keeping lease {} alive failed: {}", Long.toHexString(lease), error.toString());
      keepAliveFailures.incrementAndGet();
      executor.execute(() -> checkLease(lease));
    }

    @Override
    public void onCompleted() {
      executor.execute(() -> checkLease(lease));
    }
  }

  /** How many times the lease's keep-alive stream failed. */
  public long keepAliveFailures() {
    return keepAliveFailures.get();
  }

  /** Asks etcd whether {@code lease} still lives; registers again once it says it does not. */
  private void checkLease(long lease) {
    if (closed || lease != leaseId) {
      return;
    }
    try {
      LeaseTimeToLiveResponse ttl =
          MetadataStore.get(store.client().getLeaseClient().timeToLive(lease, LeaseOption.DEFAULT));
      if (ttl.getTTL() > 0) {
        keepAlive.close();
        keepAlive = store.client().getLeaseClient().keepAlive(lease, new KeepAliveObserver(lease));
        return;
      }
      LOG.error(
          "Broker {} lost its registration (lease {} expired)", info.id(), Long.toHexString(lease));
      keepAlive.close();
      onLost.run();
      register();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (RuntimeException e) {
      LOG.warn("etcd is unreachable ({}); keeping the registration and retrying", e.getMessage());
      executor.schedule(() -> checkLease(lease), RETRY_MS, TimeUnit.MILLISECONDS);
    }
  }

  /** Puts {@code registered} on {@code lease} if the key's version compares to 0 by {@code op}. */
  private TxnResponse put(BrokerInfo registered, long lease, Cmp.Op op) {
    ByteSequence key = store.key(ClusterImage.BROKERS + info.id());
    return store.transact(
        List.of(new Cmp(key, op, CmpTarget.version(0))),
        List.of(
            Op.put(
                key,
                ByteSequence.from(registered.toJson().encode(), UTF_8),
                PutOption.builder().withLeaseId(lease).build())));
  }

  /**
   * Marks the registration as in a controlled shutdown: the controller moves this broker's
   * leaderships to other ISR members and takes it out of every ISR, while it keeps serving.
   */
  public void beginShutdown() {
    TxnResponse response = put(info.inShutdown(), leaseId, Cmp.Op.GREATER);
    if (!response.isSucceeded()) {
      throw new IllegalStateException("Broker " + info.id() + " is not registered");
    }
    store.awaitRevision(response.getHeader().getRevision());
  }

  /** Revokes the lease, which removes the registration and any election key on it. */
  @Override
  public void close() {
    closed = true;
    executor.shutdownNow();
    if (keepAlive != null) {
      keepAlive.close();
    }
    try {
      MetadataStore.get(store.client().getLeaseClient().revoke(leaseId));
    } catch (RuntimeException e) {
      LOG.warn("Revoking lease {} failed: {}", Long.toHexString(leaseId), e.getMessage());
    }
  }
}
