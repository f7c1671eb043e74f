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
 * <p>A broker that etcd has not heard from for the session timeout has lost its lease, and the
 * controller gives its leaderships to others. A broker cut off from etcd but not from its clients
 * must not go on leading, or it would answer them from a state the cluster has moved past (a group
 * coordinator's committed offsets, say): so once no keep-alive has been answered for most of the
 * session ({@link #stepDownAfterMs}), before etcd can expire the lease, {@code onSessionLost} runs
 * and the broker stops leading. When a keep-alive is answered again the lease was still alive: once
 * the metadata has caught up with etcd, {@code onSessionResumed} runs and the broker leads what the
 * metadata says. When etcd reports the lease gone, the broker registers again.
 */
public final class BrokerRegistration implements AutoCloseable {
  private static final long RETRY_MS = 500;
  private static final long SESSION_CHECK_MS = 200;
  private static final Logger LOG = LoggerFactory.getLogger(BrokerRegistration.class);

  private final MetadataStore store;
  private final BrokerInfo info;
  private final long ttlSeconds;
  private final long stepDownAfterNanos;
  private final Runnable onSessionLost;
  private final Runnable onSessionResumed;
  private final LongConsumer onRegistered;

  /** Runs what waits on etcd: lease checks, registrations, catching up before leading again. */
  private final ScheduledExecutorService executor =
      Executors.newSingleThreadScheduledExecutor(r -> new Thread(r, "tidelog-registration"));

  /** Watches the keep-alives' answers; never waits on etcd, so that it steps down in time. */
  private final ScheduledExecutorService watchdog =
      Executors.newSingleThreadScheduledExecutor(r -> new Thread(r, "tidelog-session"));

  private final AtomicLong keepAliveFailures = new AtomicLong();
  private volatile long leaseId;

  /** When etcd last confirmed the lease: the start of its grant, or a keep-alive's answer. */
  private volatile long renewedNanos;

  private CloseableClient keepAlive;

  /** Whether {@code onSessionLost} ran and neither a renewal nor a registration followed. */
  private boolean suspended;

  private volatile boolean closed;

  /**
   * @param onRegistered called with the lease id after every successful registration
   * @param onSessionLost called when the session may have ended: no keep-alive answered for {@link
   *     #stepDownAfterMs}, or etcd reports the lease gone
   * @param onSessionResumed called when etcd answers a keep-alive after {@code onSessionLost}, the
   *     lease still alive, once the metadata has caught up with etcd
   */
  public BrokerRegistration(
      MetadataStore store,
      BrokerInfo info,
      long sessionTimeoutMs,
      LongConsumer onRegistered,
      Runnable onSessionLost,
      Runnable onSessionResumed) {
    this.store = store;
    this.info = info;
    this.ttlSeconds = Math.max(1, TimeUnit.MILLISECONDS.toSeconds(sessionTimeoutMs));
    this.stepDownAfterNanos = TimeUnit.MILLISECONDS.toNanos(stepDownAfterMs(ttlSeconds * 1000));
    this.onRegistered = onRegistered;
    this.onSessionLost = onSessionLost;
    this.onSessionResumed = onSessionResumed;
    watchdog.scheduleWithFixedDelay(
        this::checkSession, SESSION_CHECK_MS, SESSION_CHECK_MS, TimeUnit.MILLISECONDS);
  }

  /**
   * How long without an answered keep-alive the broker keeps leading: a second less than the lease
   * (half of it for leases under two seconds), which covers the round trip of the last keep-alive
   * and this check's period, so that it has stepped down before etcd can expire the lease.
   */
  static long stepDownAfterMs(long ttlMs) {
    return Math.max(ttlMs / 2, ttlMs - 1000);
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
    long asked = System.nanoTime();
    long lease = MetadataStore.get(store.client().getLeaseClient().grant(ttlSeconds)).getID();
    TxnResponse response = put(info, lease, Cmp.Op.EQUAL);
    if (!response.isSucceeded()) {
      store.client().getLeaseClient().revoke(lease);
      return false;
    }
    store.awaitRevision(response.getHeader().getRevision());
    renewedNanos = asked;
    leaseId = lease;
    keepAlive = store.client().getLeaseClient().keepAlive(lease, new KeepAliveObserver(lease));
    LOG.info(
        "Broker {} registered with lease {} ({} s)",
        info.id(),
        Long.toHexString(lease),
        ttlSeconds);
    synchronized (this) {
      suspended = false;
      onRegistered.accept(lease);
    }
    return true;
  }

  private final class KeepAliveObserver implements StreamObserver<LeaseKeepAliveResponse> {
    private final long lease;

    KeepAliveObserver(long lease) {
      this.lease = lease;
    }

    @Override
    public void onNext(LeaseKeepAliveResponse response) {
      if (!closed && lease == leaseId && response.getTTL() > 0) {
        renewedNanos = System.nanoTime();
        executor.execute(BrokerRegistration.this::resume);
      }
    }

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

  /** Steps down once no keep-alive has been answered for {@link #stepDownAfterMs}. */
  private void checkSession() {
    long silentNanos = System.nanoTime() - renewedNanos;
    if (!closed && leaseId != 0 && silentNanos > stepDownAfterNanos) {
      stepDown(
          "has had no answer from etcd for "
              + TimeUnit.NANOSECONDS.toMillis(silentNanos)
              + " ms of its "
              + ttlSeconds
              + " s session: it may have expired, and the controller may have moved its"
              + " leaderships");
    }
  }

  private synchronized void stepDown(String why) {
    if (!suspended) {
      LOG.error("Broker {} {}; it stops leading until etcd answers", info.id(), why);
      suspended = true;
      onSessionLost.run();
    }
  }

  /** After a step-down, once etcd renewed the lease: leads again what the metadata says. */
  private void resume() {
    synchronized (this) {
      if (closed || !suspended) {
        return;
      }
    }
    try {
      // The metadata must be as new as etcd's now: the controller may have moved leaderships.
      long revision =
          MetadataStore.get(store.client().getKVClient().get(store.key(ClusterImage.BROKERS)))
              .getHeader()
              .getRevision();
      store.awaitRevision(revision);
    } catch (RuntimeException e) {
      LOG.warn("Catching up with etcd before leading again failed ({}); retrying", e.getMessage());
      return; // the next keep-alive answer retries
    }
    synchronized (this) {
      if (suspended) {
        suspended = false;
        LOG.info(
            "Broker {} is in touch with etcd again, its lease alive; it leads again", info.id());
        onSessionResumed.run();
      }
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
      if (ttl.getTTL() >= 0) { // whole seconds left: 0 is under a second, -1 is gone
        keepAlive.close();
        keepAlive = store.client().getLeaseClient().keepAlive(lease, new KeepAliveObserver(lease));
        return;
      }
      LOG.error(
          "Broker {} lost its registration (lease {} expired)", info.id(), Long.toHexString(lease));
      keepAlive.close();
      stepDown("lost its lease");
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
    watchdog.shutdownNow();
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
