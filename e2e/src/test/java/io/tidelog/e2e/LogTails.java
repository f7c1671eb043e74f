package io.tidelog.e2e;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/**
 * The last lines of the logs that a test's processes wrote into its directory, printed when the
 * test fails: the directory is deleted afterwards, and CI keeps only what the build printed.
 */
final class LogTails {
  private static final int LINES = 60;

  private LogTails() {}

  static void print(Path dir) {
    try (Stream<Path> files = Files.list(dir)) {
      for (Path log : files.filter(f -> f.toString().endsWith(".log")).sorted().toList()) {
        List<String> lines = Files.readAllLines(log, StandardCharsets.ISO_8859_1);
        System.out.println("---- last lines of " + log.getFileName() + " ----");
        lines.subList(Math.max(0, lines.size() - LINES), lines.size()).forEach(System.out::println);
      }
    } catch (IOException e) {
      System.out.println("---- the logs in " + dir + " could not be read: " + e);
    }
  }
}
