package io.tidelog.broker.log;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * A small text file that is replaced atomically, in Kafka's checkpoint format: a version line
 * ({@code 0}), a line with the number of entries, then one entry per line.
 *
 * <p>A write goes to {@code <name>.tmp}, is fsynced, renamed over the file, and the directory is
 * fsynced, so a crash leaves either the old file or the new one, never a mix.
 *
 * <p>Not thread-safe: one owner writes a given file.
 */
final class CheckpointFile {
  private static final int VERSION = 0;
  private final Path file;

  CheckpointFile(Path file) {
    this.file = file;
  }

  void write(List<String> entries) throws IOException {
    StringBuilder text = new StringBuilder();
    text.append(VERSION).append('\n').append(entries.size()).append('\n');
    entries.forEach(entry -> text.append(entry).append('\n'));
    Path temp = file.resolveSibling(file.getFileName() + ".tmp");
    try (FileChannel channel =
        FileChannel.open(
            temp,
            StandardOpenOption.CREATE,
            StandardOpenOption.WRITE,
            StandardOpenOption.TRUNCATE_EXISTING)) {
      channel.write(StandardCharsets.UTF_8.encode(text.toString()));
      channel.force(true);
    }
    Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    fsyncDirectory(file.getParent());
  }

  /**
   * The entries of the file, or none when it does not exist.
   *
   * @throws IOException when the file is unreadable or malformed
   */
  List<String> read() throws IOException {
    List<String> lines;
    try {
      lines = Files.readAllLines(file, StandardCharsets.UTF_8);
    } catch (NoSuchFileException e) {
      return List.of();
    }
    if (lines.size() < 2 || !lines.get(0).equals(String.valueOf(VERSION))) {
      throw new IOException("malformed checkpoint file " + file + ": bad version line");
    }
    int count;
    try {
      count = Integer.parseInt(lines.get(1));
    } catch (NumberFormatException e) {
      throw new IOException("malformed checkpoint file " + file + ": bad entry count", e);
    }
    if (count != lines.size() - 2) {
      throw new IOException(
          "malformed checkpoint file " + file + ": expected " + count + " entries");
    }
    return new ArrayList<>(lines.subList(2, lines.size()));
  }

  static void fsyncDirectory(Path dir) throws IOException {
    try (FileChannel channel = FileChannel.open(dir, StandardOpenOption.READ)) {
      channel.force(true);
    }
  }
}
