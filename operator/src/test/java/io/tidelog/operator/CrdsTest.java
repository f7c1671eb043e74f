package io.tidelog.operator;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** The CRDs committed in {@code crds/} are exactly what the build generates from {@code api}. */
class CrdsTest {
  private static final Path REPO =
      Path.of(System.getProperty("tidelog.repo", "..")).toAbsolutePath().normalize();
  private static final Path GENERATED = Path.of("target/classes/META-INF/fabric8");

  @Test
  void committedCrdsMatchTheGeneratedOnes() throws IOException {
    // Given the CRDs that fabric8's generator wrote in process-classes, when compared with crds/,
    // then both hold the same files with the same bytes.
    List<String> generated = names(GENERATED);
    assertThat(generated).isNotEmpty();
    assertThat(names(REPO.resolve("crds")))
        .as("crds/ is stale: cp operator/%s/*.yml crds/", GENERATED)
        .isEqualTo(generated);
    for (String name : generated) {
      assertThat(Files.readString(REPO.resolve("crds").resolve(name)))
          .as("crds/%s is stale: cp operator/%s/*.yml crds/", name, GENERATED)
          .isEqualTo(Files.readString(GENERATED.resolve(name)));
    }
  }

  private static List<String> names(Path dir) throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      return files.map(p -> p.getFileName().toString()).sorted().toList();
    }
  }
}
