package io.tidelog.broker.replica;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One storage shard: a single thread that makes every call into the partitions it owns, fed by two
 * queues. The broker's own work ({@link #execute}: metadata images, replication, timeouts, ISR
 * checks, log maintenance) always runs first and is never refused; client work ({@link #client}:
 * produce, reads, offsets) waits behind it. So however much client work is queued, a leadership
 * change or an acks=all timeout is not dropped nor kept waiting behind it.
 *
 * <p>Neither queue has a fixed capacity: the broker's own work is bounded by the partitions here
 * and the cluster's size, and client work by the requests the listener lets in, at most one task
 * per distinct partition of a request, whose bytes {@code queued.max.request.bytes} bounds.
 */
final class Shard implements Executor {
  private static final Logger LOG = LoggerFactory.getLogger(Shard.class);

  private final Queue<Runnable> brokerWork = new ConcurrentLinkedQueue<>();
  private final Queue<Runnable> clientWork = new ConcurrentLinkedQueue<>();
  private final Semaphore queued = new Semaphore(0);
  private final Executor client = task -> submit(clientWork, task);
  private final Thread thread;
  private volatile boolean shutdown;

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

  private void submit(Queue<Runnable> queue, Runnable task) {
    if (shutdown) {
      throw new RejectedExecutionException(thread.getName() + " is shut down");
    }
    queue.add(task);
    queued.release();
  }

  private void run() {
    while (true) {
      try {
        if (!queued.tryAcquire(100, TimeUnit.MILLISECONDS)) {
          if (shutdown) {
            return; // every queued task has run
          }
          continue;
        }
      } catch (InterruptedException e) {
        return;
      }
      Runnable task = brokerWork.poll();
      if (task == null) {
        task = clientWork.poll();
      }
      try {
        task.run();
      } catch (Throwable e) { // the shard outlives any task: its partitions have no other thread
        LOG.error("A task on {} failed", thread.getName(), e);
      }
    }
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
