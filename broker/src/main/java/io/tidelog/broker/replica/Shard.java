package io.tidelog.broker.replica;

import io.vertx.core.Context;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One storage shard: runs every call into the partitions it owns one at a time, in order, fed by
 * two queues that its own thread drains. The broker's own work ({@link #execute}: metadata images,
 * replication, timeouts, ISR checks, log maintenance) always runs first and is never refused;
 * client work ({@link #client}: produce, reads, offsets) waits behind it. So however much client
 * work is queued, a leadership change or an acks=all timeout is not dropped nor kept waiting behind
 * it.
 *
 * <p>An event loop may also run a fetch's work {@linkplain #runInPlace in place} while the shard is
 * idle (nothing queued, nothing running): a follower's progress, the high watermark it moves and
 * the acks=all appends that completes, and reads of the log, which write nothing and read the pages
 * that the answer's {@code sendfile} then reads on the same event loop anyway. It then costs no
 * handoff to the shard's thread and back. Appends, and what the work queues on the shard, run on
 * the shard's thread.
 *
 * <p>Neither queue has a fixed capacity: the broker's own work is bounded by the partitions here
 * and the cluster's size, and client work by the requests the listener lets in, at most one task
 * per distinct partition of a request, whose bytes {@code queued.max.request.bytes} bounds.
 */
final class Shard implements Executor {
  private static final Logger LOG = LoggerFactory.getLogger(Shard.class);

  private final Queue<Runnable> brokerWork = new ConcurrentLinkedQueue<>();
  private final Queue<Runnable> clientWork = new ConcurrentLinkedQueue<>();

  /** Held by whoever runs the shard's work: its thread, or an event loop in place. */
  private final AtomicBoolean running = new AtomicBoolean();

  /** Hands the queued work to the shard's thread. */
  private final Semaphore handedOver = new Semaphore(0);

  private final Executor client = task -> submit(clientWork, task);
  private final Thread thread;
  private volatile boolean shutdown;

  /** The event loop running work in place now; read only by the one that holds the shard. */
  private Thread inPlace;

  Shard(String name) {
    thread = new Thread(this::run, name);
    thread.start();
  }

  /** Queues the broker's own work, ahead of every client task. */
  @Override
  public void execute(Runnable task) {
    submit(brokerWork, task);
  }

  /** The executor of client work, which runs once no broker work waits. */
  Executor client() {
    return client;
  }

  /**
   * On an event loop, while the shard is idle: runs {@code work} here and now, as the shard's work
   * (it must write no file, and not throw); returns whether it ran. Anywhere else, or while the
   * shard has work queued or running, returns false: the caller queues it.
   */
  boolean runInPlace(Runnable work) {
    if (shutdown
        || !Context.isOnEventLoopThread()
        || !idle()
        || !running.compareAndSet(false, true)) {
      return false;
    }
    if (!idle()) { // queued between the look and the hold: it goes first
      handedOver.release();
      return false;
    }
    inPlace = Thread.currentThread();
    try {
      work.run();
    } finally {
      inPlace = null;
      running.set(false);
      // what the work queued here, or others queued meanwhile, runs on the shard's thread
      if (!idle() && running.compareAndSet(false, true)) {
        handedOver.release();
      }
    }
    return true;
  }

  /** Whether the caller, holding the shard, runs in place on an event loop. */
  boolean isInPlace() {
    return inPlace == Thread.currentThread();
  }

  private void submit(Queue<Runnable> queue, Runnable task) {
    if (shutdown) {
      throw new RejectedExecutionException(thread.getName() + " is shut down");
    }
    queue.add(task);
    if (running.compareAndSet(false, true)) {
      handedOver.release();
    }
  }

  private void run() {
    while (true) {
      try {
        if (!handedOver.tryAcquire(100, TimeUnit.MILLISECONDS)) {
          if (shutdown && !running.get() && idle()) {
            return; // every queued task has run
          }
          continue;
        }
      } catch (InterruptedException e) {
        return;
      }
      drain();
    }
  }

  /** Holding the shard: runs the queued tasks, the broker's first, until none is left. */
  private void drain() {
    while (true) {
      Runnable task = brokerWork.poll();
      if (task == null) {
        task = clientWork.poll();
      }
      if (task == null) {
        running.set(false);
        // a task queued after the polls and before the release found the shard held: take it
        if (idle() || !running.compareAndSet(false, true)) {
          return;
        }
        continue;
      }
      try {
        task.run();
      } catch (Throwable e) { // the shard outlives any task: its partitions have no other runner
        LOG.error("A task on {} failed", thread.getName(), e);
      }
    }
  }

  private boolean idle() {
    return brokerWork.isEmpty() && clientWork.isEmpty();
  }

  /** Takes no more tasks; those queued still run. */
  void shutdown() {
    shutdown = true;
  }

  /** Waits until the queued tasks have run, after {@link #shutdown}. */
  boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
    thread.join(unit.toMillis(timeout));
    return !thread.isAlive();
  }
}
