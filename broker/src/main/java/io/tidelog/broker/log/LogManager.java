package io.tidelog.broker.log;

import io.tidelog.broker.log.PartitionLog.LoadState;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.LongConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.KafkaStorageException;
import org.apache.kafka.common.errors.LogDirNotFoundException;
import org.apache.kafka.common.record.FileRecords;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.Utils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The partition logs of a broker across its {@code log.dirs}.
 *
 * <p>Layout of each log directory (as in Kafka): one {@code <topic>-<partition>} directory per
 * partition replica, {@code recovery-point-offset-checkpoint}, {@code log-start-offset-checkpoint},
 * {@code replication-offset-checkpoint} and {@code cleaner-offset-checkpoint} ({@code <topic>
 * <partition> <offset>} lines in a {@link CheckpointFile}), a {@code partition.metadata} checkpoint
 * in each partition directory with its topic id, a {@code .kafka_cleanshutdown} marker written by a
 * clean close, and a locked {@code .lock} file that keeps a second broker out.
 *
 * <p>A replica moving to another of the broker's directories (AlterReplicaLogDirs) has a <i>future
 * log</i> there, in {@code <topic>-<partition>.<id>-future}, that a copy fills until it can replace
 * the current one: renamed {@code -moved} (from then on a restart keeps it), the current log is
 * deleted, and it is renamed {@code <topic>-<partition>}. A start finishes a move that reached
 * {@code -moved} and deletes a {@code -future} log, whose copy had not caught up.
 *
 * <p>Logs load in parallel at start, {@code num.recovery.threads.per.data.dir} threads per
 * directory. A directory that fails with an I/O error, then or later, goes offline: its logs fail
 * with {@link KafkaStorageException} while the other directories keep serving.
 *
 * <p>Thread-safe. The logs it hands out keep their own single-writer contract; {@link #close()}
 * must run after their owners stopped using them.
 */
public final class LogManager implements AutoCloseable {
  static final String RECOVERY_POINT_CHECKPOINT = "recovery-point-offset-checkpoint";
  static final String LOG_START_OFFSET_CHECKPOINT = "log-start-offset-checkpoint";
  static final String HIGH_WATERMARK_CHECKPOINT = "replication-offset-checkpoint";
  static final String CLEANER_CHECKPOINT = "cleaner-offset-checkpoint";
  static final String CLEAN_SHUTDOWN_FILE = ".kafka_cleanshutdown";
  static final String LOCK_FILE = ".lock";
  static final String FUTURE_SUFFIX = "-future";
  static final String MOVED_SUFFIX = "-moved";
  private static final int FLUSH_QUEUE_CAPACITY = 10_000;
  private static final Logger LOG = LoggerFactory.getLogger(LogManager.class);

  private final Map<TopicPartition, PartitionLog> logs = new ConcurrentHashMap<>();
  private final Map<TopicPartition, PartitionLog> futureLogs = new ConcurrentHashMap<>();

  /** Where the logs not created yet go, as AlterReplicaLogDirs asked before they existed. */
  private final Map<TopicPartition, Path> preferredDirs = new ConcurrentHashMap<>();

  private final Set<Path> liveDirs = ConcurrentHashMap.newKeySet();
  private final Set<Path> offlineDirs = ConcurrentHashMap.newKeySet();
  private final Map<Path, FileChannel> locks = new ConcurrentHashMap<>();
  private final Map<Path, Object> creationLocks = new ConcurrentHashMap<>();
  private final ExecutorService flusher;

  /** Closes the files of segments that left their logs, each after its file.delete.delay.ms. */
  private final ScheduledThreadPoolExecutor closer =
      new ScheduledThreadPoolExecutor(
          1,
          runnable -> {
            Thread thread = new Thread(runnable, "tidelog-segment-closer");
            thread.setDaemon(true);
            return thread;
          });

  /** The files {@link #closer} has yet to close, closed at once when the logs close. */
  private final Set<FileRecords> toClose = ConcurrentHashMap.newKeySet();

  private final LogServices services;
  private volatile LongConsumer flushListener = nanos -> {};
  private volatile Runnable allDirsOfflineListener = () -> {};

  private LogManager(Time time) {
    ThreadPoolExecutor executor =
        new ThreadPoolExecutor(
            1,
            1,
            0,
            TimeUnit.MILLISECONDS,
            new ArrayBlockingQueue<>(FLUSH_QUEUE_CAPACITY),
            runnable -> {
              Thread thread = new Thread(runnable, "tidelog-log-flusher");
              thread.setDaemon(true);
              return thread;
            },
            // A full queue means the disk is behind: the roll that asked waits for its fsync.
            new ThreadPoolExecutor.CallerRunsPolicy());
    this.flusher = executor;
    this.services =
        new LogServices(
            time,
            executor,
            this::handleDirFailure,
            nanos -> flushListener.accept(nanos),
            this::closeAfter);
  }

  private void closeAfter(long delayMs, FileRecords file) {
    toClose.add(file);
    try {
      closer.schedule(() -> closeNow(file), delayMs, TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException e) { // closing: no read is left to finish
      closeNow(file);
    }
  }

  private void closeNow(FileRecords file) {
    if (toClose.remove(file)) {
      try {
        file.closeHandlers();
      } catch (IOException e) {
        LOG.warn("Closing the file of a deleted segment failed: {}", e.toString());
      }
    }
  }

  /**
   * Locks and loads every log directory; partitions get their config from {@code topicConfigs}.
   *
   * @throws IOException when no log directory could be brought online
   */
  public static LogManager start(
      List<Path> logDirs,
      Function<String, LogConfig> topicConfigs,
      int recoveryThreadsPerDir,
      Time time)
      throws IOException {
    LogManager manager = new LogManager(time);
    for (Path dir : logDirs) {
      manager.lockDir(dir.toAbsolutePath().normalize());
    }
    manager.finishInterruptedMoves();
    manager.loadLogs(topicConfigs, recoveryThreadsPerDir);
    if (manager.liveDirs.isEmpty()) {
      manager.close();
      throw new IOException("none of the log directories " + logDirs + " is usable");
    }
    return manager;
  }

  private void lockDir(Path dir) {
    try {
      Files.createDirectories(dir);
      FileChannel channel =
          FileChannel.open(
              dir.resolve(LOCK_FILE), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
      FileLock lock;
      try {
        lock = channel.tryLock();
      } catch (OverlappingFileLockException e) {
        lock = null; // this very process holds it already
      }
      if (lock == null) {
        channel.close();
        throw new IOException("another process holds " + dir.resolve(LOCK_FILE));
      }
      locks.put(dir, channel);
      liveDirs.add(dir);
    } catch (IOException e) {
      LOG.error("Log directory {} is offline: {}", dir, e.toString());
      offlineDirs.add(dir);
    }
  }

  /**
   * Before loading: a {@code -moved} log replaces the log of its partition in whichever directory
   * that is, and a {@code -future} log, whose copy had not caught up, is deleted.
   */
  private void finishInterruptedMoves() {
    for (Path dir : List.copyOf(liveDirs)) {
      try (DirectoryStream<Path> children = Files.newDirectoryStream(dir, Files::isDirectory)) {
        for (Path child : children) {
          String name = child.getFileName().toString();
          if (name.endsWith(FUTURE_SUFFIX)) {
            LOG.warn("Deleting {}: the move of its replica to {} had not caught up", name, dir);
            Utils.delete(child.toFile());
          } else if (name.endsWith(MOVED_SUFFIX)) {
            String partitionDir = partitionDirName(movedPartition(name));
            for (Path other : liveDirs) {
              Utils.delete(other.resolve(partitionDir).toFile());
            }
            Files.move(child, dir.resolve(partitionDir), StandardCopyOption.ATOMIC_MOVE);
            CheckpointFile.fsyncDirectory(dir);
            LOG.info("Finished the move of {} to {}", partitionDir, dir);
          }
        }
      } catch (IOException | IllegalArgumentException e) {
        handleDirFailure(dir, e instanceof IOException io ? io : new IOException(e));
      }
    }
  }

  /** The partition of a {@code <topic>-<partition>.<id>-future} or {@code -moved} directory. */
  private static TopicPartition movedPartition(String name) {
    String withId = name.substring(0, name.lastIndexOf('-'));
    int dot = withId.lastIndexOf('.');
    if (dot <= 0) {
      throw new IllegalArgumentException("'" + name + "' is not a moving log's name");
    }
    return PartitionLog.parseTopicPartition(withId.substring(0, dot));
  }

  private static String partitionDirName(TopicPartition tp) {
    return tp.topic() + "-" + tp.partition();
  }

  private void loadLogs(Function<String, LogConfig> topicConfigs, int threadsPerDir)
      throws IOException {
    ExecutorService loaders =
        Executors.newFixedThreadPool(Math.max(1, liveDirs.size() * threadsPerDir));
    try {
      Map<Path, List<Future<PartitionLog>>> loading = new HashMap<>();
      for (Path dir : liveDirs) {
        try {
          loading.put(dir, submitLoads(dir, topicConfigs, loaders));
        } catch (IOException e) {
          handleDirFailure(dir, e);
        }
      }
      for (Map.Entry<Path, List<Future<PartitionLog>>> entry : loading.entrySet()) {
        awaitLoads(entry.getKey(), entry.getValue());
      }
    } finally {
      loaders.shutdownNow();
    }
  }

  private List<Future<PartitionLog>> submitLoads(
      Path dir, Function<String, LogConfig> topicConfigs, ExecutorService loaders)
      throws IOException {
    boolean cleanShutdown = Files.exists(dir.resolve(CLEAN_SHUTDOWN_FILE));
    Map<String, Long> recoveryPoints = readCheckpoint(dir, RECOVERY_POINT_CHECKPOINT);
    Map<String, Long> startOffsets = readCheckpoint(dir, LOG_START_OFFSET_CHECKPOINT);
    Map<String, Long> highWatermarks = readCheckpoint(dir, HIGH_WATERMARK_CHECKPOINT);
    Map<String, Long> firstDirtyOffsets = readCheckpoint(dir, CLEANER_CHECKPOINT);
    List<Future<PartitionLog>> futures = new ArrayList<>();
    try (DirectoryStream<Path> children = Files.newDirectoryStream(dir, Files::isDirectory)) {
      for (Path child : children) {
        String name = child.getFileName().toString();
        if (name.startsWith(".")) {
          continue; // not a partition: hidden directories belong to other parts of the broker
        }
        TopicPartition tp;
        try {
          tp = PartitionLog.parseTopicPartition(name);
        } catch (IllegalArgumentException e) {
          LOG.warn("Ignoring {} in log directory {}: {}", name, dir, e.getMessage());
          continue;
        }
        LoadState state =
            new LoadState(
                recoveryPoints.getOrDefault(name, 0L),
                startOffsets.getOrDefault(name, 0L),
                cleanShutdown);
        long highWatermark = highWatermarks.getOrDefault(name, 0L);
        long firstDirtyOffset = firstDirtyOffsets.getOrDefault(name, 0L);
        futures.add(
            loaders.submit(
                () -> {
                  PartitionLog log =
                      PartitionLog.open(child, topicConfigs.apply(tp.topic()), state, services);
                  log.updateHighWatermark(highWatermark);
                  log.updateFirstDirtyOffset(firstDirtyOffset);
                  return log;
                }));
      }
    }
    LOG.info(
        "Loading {} partition logs from {} after {} shutdown",
        futures.size(),
        dir,
        cleanShutdown ? "a clean" : "an unclean");
    return futures;
  }

  private void awaitLoads(Path dir, List<Future<PartitionLog>> futures) throws IOException {
    List<PartitionLog> loaded = new ArrayList<>();
    try {
      for (Future<PartitionLog> future : futures) {
        loaded.add(future.get());
      }
      Files.deleteIfExists(dir.resolve(CLEAN_SHUTDOWN_FILE));
      loaded.forEach(log -> logs.put(log.topicPartition(), log));
    } catch (ExecutionException e) {
      loaded.forEach(PartitionLog::markOffline);
      if (e.getCause() instanceof IOException io) {
        handleDirFailure(dir, io);
      } else {
        throw new IllegalStateException("loading logs from " + dir + " failed", e.getCause());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while loading " + dir, e);
    }
  }

  private static Map<String, Long> readCheckpoint(Path dir, String fileName) throws IOException {
    Map<String, Long> offsets = new HashMap<>();
    for (String line : new CheckpointFile(dir.resolve(fileName)).read()) {
      String[] fields = line.split(" ");
      if (fields.length != 3) {
        throw new IOException("malformed line '" + line + "' in " + dir.resolve(fileName));
      }
      try {
        offsets.put(fields[0] + "-" + Integer.parseInt(fields[1]), Long.parseLong(fields[2]));
      } catch (NumberFormatException e) {
        throw new IOException("malformed line '" + line + "' in " + dir.resolve(fileName), e);
      }
    }
    return offsets;
  }

  public Optional<PartitionLog> getLog(TopicPartition topicPartition) {
    return Optional.ofNullable(logs.get(topicPartition));
  }

  /**
   * The log of {@code tp} for the topic {@code topicId}, recorded in its {@code
   * partition.metadata}. A log that an earlier topic of the same name left, deleted and created
   * again while this broker was away, is deleted first: its records are not the new topic's.
   */
  public PartitionLog getOrCreateLog(TopicPartition tp, Uuid topicId, LogConfig config) {
    PartitionLog log = logs.get(tp);
    if (log != null && !log.isOffline()) {
      Optional<String> stored = log.topicId();
      if (stored.equals(Optional.of(topicId.toString()))) {
        return log;
      }
      if (stored.isPresent()) {
        LOG.warn(
            "{}: the log in {} belongs to an earlier topic {} of this name; deleting it",
            tp,
            log.dir(),
            stored.get());
        try {
          deleteLog(tp);
        } catch (IOException e) {
          handleDirFailure(log.dir().getParent(), e);
          throw new KafkaStorageException("Cannot delete the stale log of " + tp, e);
        }
      }
    }
    PartitionLog current = getOrCreateLog(tp, config);
    current.recordTopicId(topicId);
    return current;
  }

  /**
   * The log of {@code topicPartition}, created empty in the live directory with the fewest logs
   * when it does not exist yet.
   *
   * @throws KafkaStorageException when no directory is live or creating the log fails
   */
  public PartitionLog getOrCreateLog(TopicPartition topicPartition, LogConfig config) {
    return logs.computeIfAbsent(topicPartition, tp -> createLog(tp, config));
  }

  private PartitionLog createLog(TopicPartition tp, LogConfig config) {
    Path preferred = preferredDirs.remove(tp);
    Path dir =
        preferred != null && liveDirs.contains(preferred)
            ? preferred
            : liveDirs.stream()
                .min(Comparator.comparingLong(this::logCount).thenComparing(Path::toString))
                .orElseThrow(() -> new KafkaStorageException("No log directory is online"));
    try {
      // One log at a time per directory, as a directory loads its logs: the storage shards
      // creating thousands of partitions at once took both cores of a small machine from etcd and
      // the metadata path for no gain (CreateTopics of 30,000 partitions: 5.3 s, 3.4 s serialized;
      // every partition served as soon)
      synchronized (creationLocks.computeIfAbsent(dir, d -> new Object())) {
        return PartitionLog.open(
            dir.resolve(partitionDirName(tp)), config, LoadState.NEW, services);
      }
    } catch (IOException e) {
      handleDirFailure(dir, e);
      throw new KafkaStorageException("Cannot create the log of " + tp + " in " + dir, e);
    }
  }

  private long logCount(Path dir) {
    return logs.values().stream().filter(log -> log.dir().getParent().equals(dir)).count();
  }

  /** Deletes the log of {@code topicPartition} and its directory, if there is one. */
  public void deleteLog(TopicPartition topicPartition) throws IOException {
    PartitionLog log = logs.remove(topicPartition);
    if (log != null && !log.isOffline()) {
      log.delete();
    }
  }

  /**
   * The log directory {@code path} names, as {@code log.dirs} gives it.
   *
   * @throws LogDirNotFoundException when it is none of them
   * @throws KafkaStorageException when it is offline
   */
  public Path liveDir(String path) {
    Path dir = Path.of(path);
    if (!logDirs().contains(dir)) {
      throw new LogDirNotFoundException("Log dir " + path + " is not found in the config.");
    }
    if (!liveDirs.contains(dir)) {
      throw new KafkaStorageException("Log directory " + path + " is offline");
    }
    return dir;
  }

  /** Creates the log of {@code tp} in {@code dir} when it is created, if that is still live. */
  public void preferDir(TopicPartition tp, Path dir) {
    preferredDirs.put(tp, dir);
  }

  /**
   * Creates an empty future log of {@code tp} in {@code dir}, for the topic {@code topicId}: the
   * log that will replace the current one once it holds as much.
   *
   * @throws KafkaStorageException when creating it fails
   */
  public PartitionLog createFutureLog(TopicPartition tp, Path dir, Uuid topicId, LogConfig config) {
    String id = UUID.randomUUID().toString().replace("-", "");
    Path futureDir = dir.resolve(partitionDirName(tp) + "." + id + FUTURE_SUFFIX);
    try {
      PartitionLog future = PartitionLog.open(tp, futureDir, config, LoadState.NEW, services);
      future.recordTopicId(topicId);
      futureLogs.put(tp, future);
      return future;
    } catch (IOException e) {
      handleDirFailure(dir, e);
      throw new KafkaStorageException("Cannot create the future log of " + tp + " in " + dir, e);
    }
  }

  /** Deletes the future log of {@code tp}, if there is one: its move is abandoned. */
  public void deleteFutureLog(TopicPartition tp) {
    PartitionLog future = futureLogs.remove(tp);
    if (future != null && !future.isOffline()) {
      try {
        future.delete();
      } catch (IOException e) {
        handleDirFailure(future.dir().getParent(), e);
      }
    }
  }

  /**
   * Puts the future log of {@code tp}, which holds all the current log holds, in its place: closes
   * it, renames it {@code -moved}, deletes the current log and renames the future one to the
   * partition's name, then opens it. The caller keeps every write out of both meanwhile.
   *
   * @return the log that replaced the current one
   * @throws KafkaStorageException when a step fails; the current log stays if it had not gone
   */
  public PartitionLog replaceWithFutureLog(TopicPartition tp) {
    PartitionLog future = futureLogs.remove(tp);
    PartitionLog current = logs.get(tp);
    if (future == null || current == null) {
      throw new IllegalStateException(tp + " has no future log to put in place");
    }
    Path dir = future.dir().getParent();
    String name = future.dir().getFileName().toString();
    Path moved =
        dir.resolve(name.substring(0, name.length() - FUTURE_SUFFIX.length()) + MOVED_SUFFIX);
    Path target = dir.resolve(partitionDirName(tp));
    long highWatermark = current.highWatermark();
    LoadState state = new LoadState(future.logEndOffset(), future.logStartOffset(), true);
    try {
      future.close();
      Files.move(future.dir(), moved, StandardCopyOption.ATOMIC_MOVE);
      CheckpointFile.fsyncDirectory(dir);
    } catch (IOException e) {
      handleDirFailure(dir, e);
      throw new KafkaStorageException("Cannot put the future log of " + tp + " in place", e);
    }
    logs.remove(tp);
    try {
      current.delete();
      CheckpointFile.fsyncDirectory(current.dir().getParent());
    } catch (IOException e) {
      // The next start deletes what is left, as the moved log replaces it
      handleDirFailure(current.dir().getParent(), e);
    }
    try {
      Files.move(moved, target, StandardCopyOption.ATOMIC_MOVE);
      CheckpointFile.fsyncDirectory(dir);
      PartitionLog log = PartitionLog.open(target, current.config(), state, services);
      log.updateHighWatermark(highWatermark);
      logs.put(tp, log);
      return log;
    } catch (IOException e) {
      current.markOffline(); // deleted: its partition is offline until the next start finishes
      handleDirFailure(dir, e);
      throw new KafkaStorageException("Cannot open the moved log of " + tp + " in " + dir, e);
    }
  }

  /** The future logs of the replicas moving between directories. */
  public Map<TopicPartition, PartitionLog> futureLogs() {
    return Map.copyOf(futureLogs);
  }

  /**
   * Deletes the log of {@code tp} if its {@code partition.metadata} records it as the topic {@code
   * topicId}'s, and its future log if it has one.
   *
   * @return whether it was deleted
   */
  public boolean deleteStrayLog(TopicPartition tp, Uuid topicId) throws IOException {
    PartitionLog log = logs.get(tp);
    if (log == null || log.isOffline() || !log.topicId().equals(Optional.of(topicId.toString()))) {
      return false;
    }
    deleteFutureLog(tp);
    deleteLog(tp);
    return true;
  }

  /** Writes every live directory's recovery points, log start offsets and high watermarks. */
  public void checkpoint() {
    for (Path dir : liveDirs) {
      List<String> recoveryPoints = new ArrayList<>();
      List<String> startOffsets = new ArrayList<>();
      List<String> highWatermarks = new ArrayList<>();
      List<String> firstDirtyOffsets = new ArrayList<>();
      for (PartitionLog log : logs.values()) {
        if (log.dir().getParent().equals(dir) && !log.isOffline()) {
          TopicPartition tp = log.topicPartition();
          String prefix = tp.topic() + " " + tp.partition() + " ";
          recoveryPoints.add(prefix + log.recoveryPoint());
          startOffsets.add(prefix + log.logStartOffset());
          highWatermarks.add(prefix + log.highWatermark());
          firstDirtyOffsets.add(prefix + log.firstDirtyOffset());
        }
      }
      try {
        new CheckpointFile(dir.resolve(RECOVERY_POINT_CHECKPOINT)).write(recoveryPoints);
        new CheckpointFile(dir.resolve(LOG_START_OFFSET_CHECKPOINT)).write(startOffsets);
        new CheckpointFile(dir.resolve(HIGH_WATERMARK_CHECKPOINT)).write(highWatermarks);
        new CheckpointFile(dir.resolve(CLEANER_CHECKPOINT)).write(firstDirtyOffsets);
      } catch (IOException e) {
        handleDirFailure(dir, e);
      }
    }
  }

  public Set<Path> liveDirs() {
    return Set.copyOf(liveDirs);
  }

  /** Tells {@code listener} how long each fsync of a log took, in nanoseconds, from now on. */
  public void onFlush(LongConsumer listener) {
    this.flushListener = listener;
  }

  /**
   * Tells {@code listener}, on the thread that met the error, when the last online log directory
   * goes offline: the broker can then serve no partition at all.
   */
  public void onAllDirsOffline(Runnable listener) {
    this.allDirsOfflineListener = listener;
  }

  /** Every log directory given at start, online or not. */
  public Set<Path> logDirs() {
    Set<Path> all = new java.util.TreeSet<>(liveDirs);
    all.addAll(offlineDirs);
    return all;
  }

  public Set<Path> offlineDirs() {
    return Set.copyOf(offlineDirs);
  }

  public Map<TopicPartition, PartitionLog> logs() {
    return Map.copyOf(logs);
  }

  private void handleDirFailure(Path dir, IOException cause) {
    if (!liveDirs.remove(dir)) {
      return;
    }
    offlineDirs.add(dir);
    List<TopicPartition> affected = new ArrayList<>();
    futureLogs.values().stream()
        .filter(log -> log.dir().getParent().equals(dir))
        .forEach(PartitionLog::markOffline);
    logs.values().stream()
        .filter(log -> log.dir().getParent().equals(dir))
        .forEach(
            log -> {
              log.markOffline();
              affected.add(log.topicPartition());
            });
    LOG.error(
        "Log directory {} is offline after an I/O error ({}); its partitions {} are"
            + " unavailable; {} directories remain online",
        dir,
        cause.toString(),
        affected,
        liveDirs.size());
    if (liveDirs.isEmpty()) {
      allDirsOfflineListener.run();
    }
  }

  /**
   * Flushes and closes every log, writes the checkpoints and the clean-shutdown markers, so the
   * next start skips recovery.
   */
  @Override
  public void close() throws IOException {
    flusher.shutdown();
    closer.shutdownNow();
    List.copyOf(toClose).forEach(this::closeNow);
    List<PartitionLog> open = new ArrayList<>(logs.values());
    open.addAll(futureLogs.values()); // deleted at the next start, but closed as the others
    for (PartitionLog log : open) {
      try {
        log.close();
      } catch (IOException e) {
        handleDirFailure(log.dir().getParent(), e);
      } catch (KafkaStorageException e) {
        // The log's directory failed while flushing and is offline now; close the others.
      }
    }
    try {
      flusher.awaitTermination(1, TimeUnit.MINUTES);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    checkpoint();
    for (Path dir : liveDirs) {
      try {
        Files.write(dir.resolve(CLEAN_SHUTDOWN_FILE), new byte[0]);
        CheckpointFile.fsyncDirectory(dir);
      } catch (IOException e) {
        handleDirFailure(dir, e);
      }
    }
    for (FileChannel lock : locks.values()) {
      lock.close();
    }
  }
}
