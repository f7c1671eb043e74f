package io.tidelog.broker.replica;

import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.internal.VertxInternal;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One storage shard: runs every call into the partitions it owns one at a time, in order, fed by
 * two queues that its own thread drains. The thread is a Netty event loop of its own (not one of
 * the listeners' event loops, and it may block on file I/O): the replica fetchers of the partitions
 * here run their leaders' connections on it ({@link #context}), so a fetched batch is appended
 * where its response is read and the next fetch leaves from there, as Kafka's fetcher thread
 * appends in place, with no handoff between threads. The broker's own work ({@link #execute}:
 * metadata images, replication, timeouts, ISR checks, log maintenance) always runs first and is
 * never refused; client work ({@link #client}: produce, reads, offsets) waits behind it. So however
 * much client work is queued, a leadership change or an acks=all timeout is not dropped nor kept
 * waiting behind it.
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

  /** The most tasks run in a row before the loop's sockets have their turn. */
  private static final int DRAIN_BATCH = 64;

  private final Queue<Runnable> brokerWork = new ConcurrentLinkedQueue<>();
  private final Queue<Runnable> clientWork = new ConcurrentLinkedQueue<>();

  /** Held by whoever runs the shard's work: its thread, or an event loop in place. */
  private final AtomicBoolean running = new AtomicBoolean();

  private final Executor client = task -> submit(clientWork, task);
  private final String name;
  private final EventLoopGroup group;
  private final EventLoop loop;
  private volatile boolean shutdown;
  private Context context;

  /** The event loop running work in place now; read only by the one that holds the shard. */
  private Thread inPlace;

  Shard(String name) {
    this.name = name;
    // a plain thread: Netty's BlockHound integration takes its own threads to never block
    this.group =
        new MultiThreadIoEventLoopGroup(
            1, (ThreadFactory) r -> new Thread(r, name), NioIoHandler.newFactory());
    this.loop = group.next();
    loop.execute(() -> {}); // starts the thread, which Netty would start with the first task
  }

  /** The Vert.x context on this shard's thread, where its partitions' replica fetchers run. */
  synchronized Context context(Vertx vertx) {
    if (context == null) {
      context = ((VertxInternal) vertx).contextBuilder().withEventLoop(loop).build();
    }
    return context;
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
      loop.execute(this::drain);
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
        loop.execute(this::drain);
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
      throw new RejectedExecutionException(name + " is shut down");
    }
    queue.add(task);
    if (running.compareAndSet(false, true)) {
      loop.execute(this::drain);
    }
  }

  /**
   * On the shard's thread, holding the shard: runs the queued tasks, the broker's first, until none
   * is left, {@value #DRAIN_BATCH} at a time between the loop's turns at its sockets.
   */
  private void drain() {
    for (int ran = 0; ran < DRAIN_BATCH; ran++) {
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
        LOG.error("A task on {} failed", name, e);
      }
    }
    loop.execute(this::drain);
  }

  private boolean idle() {
    return brokerWork.isEmpty() && clientWork.isEmpty();
  }

  /** Takes no more tasks; those queued still run. */
  void shutdown() {
    shutdown = true;
  }

  /** Waits until the queued tasks have run, after {@link #shutdown}, then stops the thread. */
  boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
    long deadline = System.nanoTime() + unit.toNanos(timeout);
    while (running.get() || !idle()) {
      if (System.nanoTime() >= deadline) {
        return false;
      }
      Thread.sleep(10);
    }
    return group
        .shutdownGracefully(0, 0, TimeUnit.MILLISECONDS)
        .await(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
  }
}
