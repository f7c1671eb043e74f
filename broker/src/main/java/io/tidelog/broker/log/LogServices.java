package io.tidelog.broker.log;

import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.Executor;
import java.util.function.LongConsumer;
import org.apache.kafka.common.record.FileRecords;
import org.apache.kafka.common.utils.Time;

/**
 * What every {@link PartitionLog} of a broker shares.
 *
 * @param time the clock, injected so that tests control retention and rolling
 * @param flusher runs the fsync of rolled segments off the partition's thread
 * @param dirFailureHandler told when an I/O error hits a log directory, so that it goes offline
 * @param flushNanos told how long each fsync of a log (or of a rolled segment's files) took
 * @param fileCloser closes the file of a deleted or replaced segment after {@code
 *     file.delete.delay.ms}
 */
public record LogServices(
    Time time,
    Executor flusher,
    DirFailureHandler dirFailureHandler,
    LongConsumer flushNanos,
    FileCloser fileCloser) {

  /** Services that time no flush and close a deleted segment's file at once. */
  public LogServices(Time time, Executor flusher, DirFailureHandler dirFailureHandler) {
    this(time, flusher, dirFailureHandler, nanos -> {}, (delayMs, file) -> file.closeHandlers());
  }

  /**
   * Closes the file of a segment that left the log, once the reads already answered from it have
   * been sent, as Kafka's asynchronous segment deletion does: a response's file region still being
   * written to a socket keeps reading the open file, deleted or replaced on disk.
   */
  @FunctionalInterface
  public interface FileCloser {
    void closeAfter(long delayMs, FileRecords file) throws IOException;
  }

  /** Reacts to an I/O error in a log directory. */
  @FunctionalInterface
  public interface DirFailureHandler {
    void onFailure(Path logDir, IOException cause);
  }
}
