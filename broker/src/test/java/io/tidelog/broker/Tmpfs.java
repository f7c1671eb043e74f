package io.tidelog.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * A size-limited tmpfs that a test mounts, fills and frees: a disk that runs out of room. Mounting
 * needs root: without it the test is skipped, except with {@code CI=true}, where it fails.
 */
public final class Tmpfs implements AutoCloseable {
  private static final int MAX_CHUNKS = 100_000;
  public final Path path;

  private Tmpfs(Path path) {
    this.path = path;
  }

  /** Mounts a tmpfs of {@code sizeKib} KiB on {@code mountPoint}, created if missing. */
  public static Tmpfs mount(Path mountPoint, int sizeKib) throws Exception {
    Files.createDirectories(mountPoint);
    Process mount =
        new ProcessBuilder(
                "mount",
                "-t",
                "tmpfs",
                "-o",
                "size=" + sizeKib + "k",
                "tidelog-test",
                mountPoint.toString())
            .redirectErrorStream(true)
            .start();
    boolean mounted = mount.waitFor(30, TimeUnit.SECONDS) && mount.exitValue() == 0;
    if (!"true".equals(System.getenv("CI"))) {
      assumeTrue(mounted, "mounting a tmpfs needs root; the test is skipped");
    }
    assertThat(mounted).as("mount a tmpfs (root)").isTrue();
    return new Tmpfs(mountPoint);
  }

  /** Writes a file until the file system says it is full. */
  public void fill() throws IOException {
    byte[] chunk = new byte[4096];
    try (OutputStream out = Files.newOutputStream(path.resolve("filler"))) {
      for (int i = 0; i < MAX_CHUNKS; i++) {
        out.write(chunk);
      }
      throw new IllegalStateException("the tmpfs at " + path + " took 400 MB");
    } catch (IOException full) {
      assertThat(full).hasMessageContaining("No space left on device");
    }
  }

  /** Deletes what {@link #fill()} wrote. */
  public void free() throws IOException {
    Files.delete(path.resolve("filler"));
  }

  /** Unmounts lazily: a log that failed on it may still hold its files open. */
  @Override
  public void close() throws Exception {
    new ProcessBuilder("umount", "-l", path.toString()).start().waitFor(30, TimeUnit.SECONDS);
  }
}
