package io.tidelog.broker.replica;

import io.tidelog.broker.log.PartitionLog;
import java.nio.file.Path;

/**
 * A replica's future log in another of this broker's directories (AlterReplicaLogDirs): copies of
 * the current log's batches fill it until it holds as much and replaces it, as Kafka's future
 * replica, which its {@code ReplicaAlterLogDirsThread} fills. Shard only.
 */
final class FutureReplica {
  private final PartitionLog log;
  private long truncationsSeen;

  /**
   * @param truncationsSeen the current log's {@link PartitionLog#truncations()} when the copy began
   */
  FutureReplica(PartitionLog log, long truncationsSeen) {
    this.log = log;
    this.truncationsSeen = truncationsSeen;
  }

  PartitionLog log() {
    return log;
  }

  /** The log directory it moves to. */
  Path dir() {
    return log.dir().getParent();
  }

  long truncationsSeen() {
    return truncationsSeen;
  }

  void copiedSince(long truncations) {
    this.truncationsSeen = truncations;
  }
}
