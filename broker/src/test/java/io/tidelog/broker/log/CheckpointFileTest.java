package io.tidelog.broker.log;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CheckpointFileTest {
  @TempDir Path dir;

  @Test
  void writesReplaceTheFileWholeAndLeaveNoTempFile() throws IOException {
    CheckpointFile file = new CheckpointFile(dir.resolve("cp"));
    file.write(List.of("orders 0 10", "orders 1 20"));

    file.write(List.of("orders 0 11"));

    assertThat(Files.readAllLines(dir.resolve("cp"))).containsExactly("0", "1", "orders 0 11");
    assertThat(file.read()).containsExactly("orders 0 11");
    try (var files = Files.list(dir)) {
      assertThat(files).containsExactly(dir.resolve("cp"));
    }
  }

  @Test
  void aMissingFileHasNoEntriesAndAMalformedOneIsAnError() throws IOException {
    assertThat(new CheckpointFile(dir.resolve("absent")).read()).isEmpty();
    Files.write(dir.resolve("short"), List.of("0", "3", "a 0 1"));
    Files.write(dir.resolve("version"), List.of("7", "0"));

    assertThrows(IOException.class, () -> new CheckpointFile(dir.resolve("short")).read());
    assertThrows(IOException.class, () -> new CheckpointFile(dir.resolve("version")).read());
  }
}
