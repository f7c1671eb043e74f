package io.tidelog.broker;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * A real etcd (Debian's {@code etcd-server}) on free loopback ports with its data under a test's
 * directory. It can be stopped and started again on the same ports and data.
 */
public final class EtcdServer implements AutoCloseable {
  private static final long START_TIMEOUT_MS = 20_000;
  private final Path dataDir;
  private final int clientPort;
  private final int peerPort;
  private final int healthPort;

  /** etcd's TLS flags (--cert-file, --key-file, --trusted-ca-file, --client-cert-auth), or none. */
  private final List<String> tlsFlags;

  private Process process;

  private EtcdServer(
      Path dataDir, int clientPort, int peerPort, int healthPort, List<String> tlsFlags) {
    this.dataDir = dataDir;
    this.clientPort = clientPort;
    this.peerPort = peerPort;
    this.healthPort = healthPort;
    this.tlsFlags = tlsFlags;
  }

  public static EtcdServer start(Path dir) throws Exception {
    Files.createDirectories(dir);
    EtcdServer etcd =
        new EtcdServer(dir.resolve("data"), freePort(), freePort(), freePort(), List.of());
    etcd.start();
    return etcd;
  }

  /**
   * An etcd that serves clients over TLS with {@code certFile} and {@code keyFile} and takes only
   * clients whose certificate {@code caFile} signed.
   */
  static EtcdServer startTls(Path dir, Path caFile, Path certFile, Path keyFile) throws Exception {
    Files.createDirectories(dir);
    EtcdServer etcd =
        new EtcdServer(
            dir.resolve("data"),
            freePort(),
            freePort(),
            freePort(),
            List.of(
                "--cert-file",
                certFile.toString(),
                "--key-file",
                keyFile.toString(),
                "--trusted-ca-file",
                caFile.toString(),
                "--client-cert-auth"));
    etcd.start();
    return etcd;
  }

  /** Where its data and log live. */
  Path dir() {
    return dataDir.getParent();
  }

  public String endpoint() {
    return (tlsFlags.isEmpty() ? "http" : "https") + "://127.0.0.1:" + clientPort;
  }

  void start() throws Exception {
    String peer = "http://127.0.0.1:" + peerPort;
    List<String> command =
        new java.util.ArrayList<>(
            List.of(
                "etcd",
                "--name",
                "test",
                "--data-dir",
                dataDir.toString(),
                "--listen-client-urls",
                endpoint(),
                "--advertise-client-urls",
                endpoint(),
                "--listen-metrics-urls",
                "http://127.0.0.1:" + healthPort,
                "--listen-peer-urls",
                peer,
                "--initial-advertise-peer-urls",
                peer,
                "--initial-cluster",
                "test=" + peer));
    command.addAll(tlsFlags);
    process =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(
                ProcessBuilder.Redirect.appendTo(dataDir.resolveSibling("etcd.log").toFile()))
            .start();
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
    long deadline = System.currentTimeMillis() + START_TIMEOUT_MS;
    while (System.currentTimeMillis() < deadline) {
      if (!process.isAlive()) {
        throw new IllegalStateException(
            "etcd exited with "
                + process.exitValue()
                + "; see "
                + dataDir.resolveSibling("etcd.log"));
      }
      try {
        HttpResponse<String> health =
            http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + healthPort + "/health"))
                    .timeout(Duration.ofSeconds(1))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
        if (health.statusCode() == 200 && health.body().contains("true")) {
          return;
        }
      } catch (IOException e) {
        // not listening yet
      }
      Thread.sleep(100);
    }
    throw new IllegalStateException(
        "etcd did not become healthy within " + START_TIMEOUT_MS + " ms");
  }

  /** SIGSTOP: etcd keeps its connections and answers nothing, as in a long stall. */
  public void pause() throws Exception {
    signal("STOP");
  }

  public void resume() throws Exception {
    signal("CONT");
  }

  private void signal(String name) throws Exception {
    Process kill = new ProcessBuilder("kill", "-" + name, String.valueOf(process.pid())).start();
    if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
      throw new IllegalStateException("kill -" + name + " " + process.pid() + " failed");
    }
  }

  void stop() throws InterruptedException {
    process.destroy();
    if (!process.waitFor(10, TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }
  }

  /**
   * Ports handed out: two picks a moment apart must differ, as a test binds them later (two of a
   * broker's servers on one port share it in Vert.x, which hands connections to either).
   */
  private static final java.util.Set<Integer> HANDED_OUT = new java.util.HashSet<>();

  /**
   * A free loopback port below Linux's ephemeral range (32768 and up), so that no outgoing
   * connection can take it as its local port before the process that was given it binds it; never
   * one handed out before in this JVM.
   */
  static synchronized int freePort() throws IOException {
    for (int attempt = 0; attempt < 100; attempt++) {
      int port = 20_000 + ThreadLocalRandom.current().nextInt(12_000);
      if (!HANDED_OUT.contains(port) && isFree(port)) {
        HANDED_OUT.add(port);
        return port;
      }
    }
    throw new IOException("no free port between 20000 and 32000");
  }

  /** Whether nothing listens on loopback {@code port} now. */
  static boolean isFree(int port) {
    try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
      return true;
    } catch (IOException taken) {
      return false;
    }
  }

  @Override
  public void close() throws InterruptedException {
    stop();
  }
}
