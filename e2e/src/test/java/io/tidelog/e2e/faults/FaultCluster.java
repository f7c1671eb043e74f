package io.tidelog.e2e.faults;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.OutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * A Tidelog cluster under test: a three-member etcd cluster and N brokers, every one a real process
 * in its own network namespace (see {@link Network}), each broker's {@code log.dirs} on a
 * size-limited tmpfs of its own, so that a test can fill one broker's disk.
 */
final class FaultCluster implements AutoCloseable {
  static final Path REPO =
      Path.of(System.getProperty("tidelog.repo", "..")).toAbsolutePath().normalize();
  private static final long READY_TIMEOUT_MS = 90_000;
  private static final ObjectMapper JSON = new ObjectMapper();

  /** The source name of the brokers' tmpfs mounts, followed by the test JVM's pid. */
  private static final String MOUNT_SOURCE = "tidelog-faults-";

  private static final long PID = ProcessHandle.current().pid();
  final Network network;
  final List<Node> etcd = new ArrayList<>();
  final List<Node> brokers = new ArrayList<>();
  private final Path dir;

  /** The secure round's CA and configs, or null for PLAINTEXT and plain HTTP to etcd. */
  private final FaultSecurity security;

  private final HttpClient http;

  private FaultCluster(Network network, Path dir, FaultSecurity security) throws Exception {
    this.network = network;
    this.dir = dir;
    this.security = security;
    HttpClient.Builder http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1));
    if (security != null) {
      http.sslContext(security.harnessTls());
    }
    this.http = http.build();
  }

  private String etcdScheme() {
    return security == null ? "http" : "https";
  }

  /**
   * Starts etcd and {@code brokerCount} brokers and waits until every one is ready.
   *
   * @param diskMb the size of each broker's log file system
   * @param brokerConfig broker configs on top of those the harness sets
   * @param security the secure round's configs, or null for a PLAINTEXT cluster
   */
  static FaultCluster start(
      Path dir,
      int brokerCount,
      int diskMb,
      Map<String, String> brokerConfig,
      FaultSecurity security)
      throws Exception {
    unmountLeftovers();
    FaultCluster cluster = new FaultCluster(Network.create(), dir, security);
    try {
      cluster.startEtcd();
      for (int id = 1; id <= brokerCount; id++) {
        cluster.addBroker(id, diskMb, brokerConfig);
      }
      for (Node broker : cluster.brokers) {
        cluster.awaitReady(broker);
      }
      return cluster;
    } catch (Exception | Error e) {
      cluster.close();
      throw e;
    }
  }

  private void startEtcd() throws Exception {
    List<Network.Host> hosts = new ArrayList<>();
    for (int i = 1; i <= 3; i++) {
      hosts.add(network.addHost("e" + i));
    }
    String initialCluster =
        hosts.stream()
            .map(h -> h.name() + "=http://" + h.address() + ":2380")
            .collect(Collectors.joining(","));
    for (Network.Host host : hosts) {
      Path memberDir = dir.resolve(host.name());
      String client = etcdScheme() + "://" + host.address() + ":2379";
      String peer = "http://" + host.address() + ":2380";
      List<String> command =
          new ArrayList<>(
              List.of(
                  "etcd",
                  "--name",
                  host.name(),
                  "--data-dir",
                  memberDir.resolve("data").toString(),
                  "--listen-client-urls",
                  client,
                  "--advertise-client-urls",
                  client,
                  "--listen-peer-urls",
                  peer,
                  "--initial-advertise-peer-urls",
                  peer,
                  "--initial-cluster",
                  initialCluster,
                  "--initial-cluster-state",
                  "new",
                  "--max-txn-ops",
                  "10000",
                  // Compacted every minute (dev and the operator: five), so that the faults also
                  // meet watches that lost their history and read the metadata again
                  "--auto-compaction-mode",
                  "periodic",
                  "--auto-compaction-retention",
                  "1m"));
      if (security != null) {
        security.issue(host.name(), host.address());
        command.addAll(security.etcdFlags(host.name()));
      }
      Node member = new Node(host, memberDir, command);
      member.start();
      etcd.add(member);
    }
    for (Node member : etcd) {
      awaitEtcd(member);
    }
  }

  String etcdEndpoints() {
    return etcd.stream()
        .map(m -> etcdScheme() + "://" + m.host.address() + ":2379")
        .collect(Collectors.joining(","));
  }

  private void addBroker(int id, int diskMb, Map<String, String> overrides) throws Exception {
    Network.Host host = network.addHost("b" + id);
    Path brokerDir = dir.resolve(host.name());
    Path disk = Files.createDirectories(brokerDir.resolve("disk"));
    Command.run(
        "mount", "-t", "tmpfs", "-o", "size=" + diskMb + "m", MOUNT_SOURCE + PID, disk.toString());
    Map<String, String> config = new TreeMap<>();
    config.put("node.id", String.valueOf(id));
    config.put("listeners", "PLAINTEXT://" + host.address() + ":9092");
    config.put("log.dirs", disk.resolve("data").toString());
    config.put("tidelog.http.port", "8080");
    config.put("tidelog.etcd.endpoints", etcdEndpoints());
    config.put("num.io.threads", "2");
    List<String> arguments = new ArrayList<>();
    if (security != null) {
      security.issue(host.name(), host.address());
      config.putAll(security.brokerConfig(host.name(), host.address()));
      arguments.addAll(security.brokerArguments());
    }
    config.putAll(overrides);
    Path properties = brokerDir.resolve("server.properties");
    Files.writeString(
        properties,
        config.entrySet().stream()
            .map(e -> e.getKey() + "=" + e.getValue() + "\n")
            .collect(Collectors.joining()));
    List<String> command =
        new ArrayList<>(
            List.of(
                REPO.resolve("bin/tidelog").toString(),
                "broker",
                "--config",
                properties.toString(),
                "--heap",
                "256m"));
    command.addAll(arguments);
    Node broker = new Node(host, brokerDir, command);
    broker.start();
    brokers.add(broker);
  }

  String bootstrap() {
    return brokers.stream().map(b -> b.host.address() + ":9092").collect(Collectors.joining(","));
  }

  /** Waits until the broker's {@code /readyz} says it has joined the cluster. */
  void awaitReady(Node broker) throws Exception {
    awaitHttp(broker, "http://" + broker.host.address() + ":8080/readyz");
  }

  private void awaitHttp(Node node, String url) throws Exception {
    long deadline = System.currentTimeMillis() + READY_TIMEOUT_MS;
    while (System.currentTimeMillis() < deadline) {
      if (!node.alive()) {
        throw new IllegalStateException(node + " exited; see " + node.dir);
      }
      try {
        HttpResponse<String> response =
            http.send(
                HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(2)).build(),
                HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() == 200 && !response.body().contains("false")) {
          return;
        }
      } catch (IOException e) {
        // not listening yet
      }
      Thread.sleep(200);
    }
    throw new IllegalStateException(node + " was not ready within " + READY_TIMEOUT_MS + " ms");
  }

  /** The etcd member that is the Raft leader now, if a member that answers knows one. */
  Optional<Node> etcdLeader() throws InterruptedException {
    for (Node member : etcd) {
      if (!member.alive()) {
        continue;
      }
      try {
        HttpResponse<String> response =
            http.send(
                HttpRequest.newBuilder(
                        URI.create(
                            etcdScheme()
                                + "://"
                                + member.host.address()
                                + ":2379/v3/maintenance/status"))
                    .timeout(Duration.ofSeconds(2))
                    .POST(HttpRequest.BodyPublishers.ofString("{}"))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
        JsonNode status = JSON.readTree(response.body());
        String leader = status.path("leader").asText();
        if (!leader.isEmpty() && leader.equals(status.path("header").path("member_id").asText())) {
          return Optional.of(member);
        }
      } catch (IOException e) {
        // this member does not answer; ask the next
      }
    }
    return Optional.empty();
  }

  /** Waits until the etcd member answers its health check (it has a leader). */
  void awaitEtcd(Node member) throws Exception {
    awaitHttp(member, etcdScheme() + "://" + member.host.address() + ":2379/health");
  }

  Path disk(Node broker) {
    return broker.dir.resolve("disk");
  }

  /** Fills the broker's log file system until the kernel says it is full. */
  void fillDisk(Node broker) throws IOException {
    Path filler = disk(broker).resolve("filler");
    byte[] chunk = new byte[1 << 20];
    try (OutputStream out = Files.newOutputStream(filler)) {
      for (int i = 0; i < 100_000; i++) {
        out.write(chunk);
      }
    } catch (IOException full) {
      if (!String.valueOf(full.getMessage()).contains("No space left")) {
        throw full;
      }
    }
  }

  void freeDisk(Node broker) throws IOException {
    Files.deleteIfExists(disk(broker).resolve("filler"));
  }

  /** Unmounts the brokers' file systems that a test JVM which is gone left mounted. */
  private static void unmountLeftovers() throws IOException, InterruptedException {
    for (String line : Files.readAllLines(Path.of("/proc/mounts"))) {
      String[] fields = line.split(" ");
      if (fields[0].startsWith(MOUNT_SOURCE)) {
        long pid = Long.parseLong(fields[0].substring(MOUNT_SOURCE.length()));
        if (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) {
          continue;
        }
        Command.attempt("umount", fields[1]);
      }
    }
  }

  @Override
  public void close() throws Exception {
    for (Node broker : brokers) {
      broker.kill();
      Command.attempt("umount", disk(broker).toString());
    }
    for (Node member : etcd) {
      member.kill();
    }
    network.close();
  }
}
