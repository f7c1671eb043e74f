package io.tidelog.broker.log;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.apache.kafka.common.Uuid;

/**
 * A partition directory's {@code partition.metadata}: the id of the topic its log belongs to, so
 * that a log an earlier topic of the same name left is never taken for the new topic's.
 *
 * <p>As in Kafka (KAFKA-13092), {@link #record} only remembers the id, and the file is written and
 * fsynced by {@link #maybeFlush}: in the background, or by the log before its first append and at
 * close, whichever comes first. Creating many partitions then costs no fsync on the threads that
 * serve them, and no record is ever durable in a directory whose topic id is not.
 *
 * <p>Thread-safe: the log's thread and the flusher may flush at once.
 */
final class PartitionMetadataFile {
  static final String FILE_NAME = "partition.metadata";

  private final Path partitionDir;
  private final CheckpointFile file;
  private volatile Uuid unflushed;

  PartitionMetadataFile(Path partitionDir) {
    this.partitionDir = partitionDir;
    this.file = new CheckpointFile(partitionDir.resolve(FILE_NAME));
  }

  /** Records {@code topicId}, to be written by the next {@link #maybeFlush}. */
  synchronized void record(Uuid topicId) {
    unflushed = topicId;
  }

  /** Writes and fsyncs the recorded topic id, if one was recorded since the last flush. */
  void maybeFlush() throws IOException {
    if (unflushed == null) {
      return; // every append asks: no lock once written
    }
    synchronized (this) {
      Uuid topicId = unflushed;
      if (topicId != null) {
        file.write(List.of(topicId.toString()));
        unflushed = null;
      }
    }
  }

  /** Forgets a recorded topic id unwritten: the log is being deleted. */
  synchronized void discard() {
    unflushed = null;
  }

  /**
   * The topic id recorded, or stored in the file; none when neither holds one.
   *
   * @throws IOException when the file is unreadable or malformed
   */
  Optional<String> read() throws IOException {
    Uuid recorded = unflushed;
    if (recorded != null) {
      return Optional.of(recorded.toString());
    }
    List<String> entries = file.read();
    if (entries.size() > 1) {
      throw new IOException("malformed " + FILE_NAME + " in " + partitionDir + ": many ids");
    }
    return entries.stream().findFirst();
  }
}
