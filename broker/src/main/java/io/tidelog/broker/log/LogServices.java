package io.tidelog.broker.log;

import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.Executor;
import org.apache.kafka.common.utils.Time;

/**
 * What every {@link PartitionLog} of a broker shares.
 *
 * @param time the clock, injected so that tests control retention and rolling
 * @param flusher runs the fsync of rolled segments off the partition's thread
 * @param dirFailureHandler told when an I/O error hits a log directory, so that it goes offline
 */
public record LogServices(Time time, Executor flusher, DirFailureHandler dirFailureHandler) {

  /** Reacts to an I/O error in a log directory. */
  @FunctionalInterface
  public interface DirFailureHandler {
    void onFailure(Path logDir, IOException cause);
  }
}
