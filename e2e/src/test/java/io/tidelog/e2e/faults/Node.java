package io.tidelog.e2e.faults;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** One server process (an etcd member or a broker) running inside its host's namespace. */
final class Node {
  private static final long STOP_TIMEOUT_S = 60;

  /** What a broker logs when it stops because every log directory failed. */
  private static final String STORAGE_FAILURE = "Every log directory is offline";

  final String name;
  final Network.Host host;
  final Path dir;
  private final List<String> command;
  private Process process;
  private boolean paused;

  Node(Network.Host host, Path dir, List<String> command) throws IOException {
    this.name = host.name();
    this.host = host;
    this.dir = Files.createDirectories(dir);
    this.command = command;
  }

  synchronized void start() throws IOException {
    if (alive()) {
      return;
    }
    process =
        new ProcessBuilder(host.exec(command))
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve(name + ".log").toFile()))
            .start();
    paused = false;
  }

  synchronized boolean alive() {
    return process != null && process.isAlive();
  }

  /**
   * Waits until the process exits if its log says that it is stopping after a storage failure;
   * whether it exited.
   */
  synchronized boolean awaitExit(Duration timeout) throws IOException, InterruptedException {
    if (alive() && Files.readString(dir.resolve(name + ".log")).contains(STORAGE_FAILURE)) {
      process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }
    return process != null && !process.isAlive();
  }

  /** SIGKILL, and waits until the process is gone. */
  synchronized void kill() throws InterruptedException {
    if (alive()) {
      process.destroyForcibly().waitFor(STOP_TIMEOUT_S, TimeUnit.SECONDS);
    }
  }

  /** SIGTERM (a broker's controlled shutdown), SIGKILL if it does not exit in time. */
  synchronized void stop() throws IOException, InterruptedException {
    if (alive()) {
      resume();
      process.destroy();
      if (!process.waitFor(STOP_TIMEOUT_S, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(STOP_TIMEOUT_S, TimeUnit.SECONDS);
      }
    }
  }

  /** SIGSTOP: the process keeps its sockets and answers nothing, like a long GC pause. */
  synchronized void pause() throws IOException, InterruptedException {
    if (alive()) {
      Command.run("kill", "-STOP", String.valueOf(process.pid()));
      paused = true;
    }
  }

  synchronized void resume() throws IOException, InterruptedException {
    if (alive() && paused) {
      Command.run("kill", "-CONT", String.valueOf(process.pid()));
    }
    paused = false;
  }

  @Override
  public String toString() {
    return name + "@" + host.address();
  }
}
