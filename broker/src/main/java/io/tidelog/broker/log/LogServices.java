package io.tidelog.broker.log;

import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.Executor;
import java.util.function.LongConsumer;
import org.apache.kafka.common.utils.Time;

/**
 * What every {@link PartitionLog} of a broker shares.
 *
 * @param time the clock, injected so that tests control retention and rolling
 * @param flusher runs the fsync of rolled segments off the partition's thread
 * @param dirFailureHandler told when an I/O error hits a log directory, so that it goes offline
 * @param flushNanos told how long each fsync of a log (or of a rolled segment's files) took
 */
public record LogServices(
    Time time, Executor flusher, DirFailureHandler dirFailureHandler, LongConsumer flushNanos) {

  /** Services that time no flush. */
  public LogServices(Time time, Executor flusher, DirFailureHandler dirFailureHandler) {
    this(time, flusher, dirFailureHandler, nanos -> {});
  }

  /** Reacts to an I/O error in a log directory. */
  @FunctionalInterface
  public interface DirFailureHandler {
    void onFailure(Path logDir, IOException cause);
  }
}
