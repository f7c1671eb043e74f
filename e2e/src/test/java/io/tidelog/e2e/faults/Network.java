package io.tidelog.e2e.faults;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Hosts for a cluster on one machine: one Linux network namespace per host, each with a veth pair
 * into a bridge that this test creates, on a private /24 that nothing else routes. The test's own
 * JVM reaches every host through the bridge; nothing listens outside the namespaces. A partition is
 * a pair of blackhole routes, one in each host, so that packets between them are dropped silently,
 * as on a broken switch, while each still talks to everyone else.
 *
 * <p>Needs root (or CAP_NET_ADMIN and CAP_SYS_ADMIN) and iproute2. Names carry this JVM's pid, and
 * namespaces left by a JVM that died are removed first.
 */
final class Network implements AutoCloseable {
  private static final Pattern OURS = Pattern.compile("^tl(\\d+)-\\S+");
  private final long pid = ProcessHandle.current().pid();
  private final String bridge = "tlb" + pid;
  private final String subnet;
  private final List<Host> hosts = new ArrayList<>();
  private final Set<List<Host>> cuts = new LinkedHashSet<>();

  /** One host: its namespace and its address on the bridge. */
  record Host(String name, String namespace, String address) {
    /** The command line that runs {@code command} inside this host. */
    List<String> exec(List<String> command) {
      List<String> inside = new ArrayList<>(List.of("ip", "netns", "exec", namespace));
      inside.addAll(command);
      return inside;
    }
  }

  private Network(String subnet) {
    this.subnet = subnet;
  }

  /** Whether this machine lets the test create namespaces (root and iproute2). */
  static boolean available() {
    try {
      String probe = "tlprobe" + ProcessHandle.current().pid();
      if (Command.attempt("ip", "netns", "add", probe).exitCode() != 0) {
        return false;
      }
      Command.run("ip", "netns", "del", probe);
      return true;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  static Network create() throws IOException, InterruptedException {
    removeLeftovers();
    String routes = Command.run("ip", "-4", "route", "show");
    long pid = ProcessHandle.current().pid();
    for (int attempt = 0; attempt < 200; attempt++) {
      String subnet = "10.213." + (int) ((pid + attempt) % 200 + 20);
      if (!routes.contains(subnet + ".0/24")) {
        Network network = new Network(subnet);
        network.up();
        return network;
      }
    }
    throw new IOException("no free 10.213.x.0/24 subnet for the test's bridge");
  }

  private void up() throws IOException, InterruptedException {
    Command.run("ip", "link", "add", bridge, "type", "bridge");
    Command.run("ip", "addr", "add", subnet + ".1/24", "dev", bridge);
    Command.run("ip", "link", "set", bridge, "up");
  }

  /** Adds a host named {@code name}, with the next address on the bridge. */
  Host addHost(String name) throws IOException, InterruptedException {
    int index = hosts.size();
    String namespace = "tl" + pid + "-" + name;
    String veth = "tl" + pid + "h" + index;
    String address = subnet + "." + (10 + index);
    Command.run("ip", "netns", "add", namespace);
    Command.run(
        "ip", "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", namespace);
    Command.run("ip", "link", "set", veth, "master", bridge, "up");
    Command.run("ip", "-n", namespace, "addr", "add", address + "/24", "dev", "eth0");
    Command.run("ip", "-n", namespace, "link", "set", "eth0", "up");
    Command.run("ip", "-n", namespace, "link", "set", "lo", "up");
    Host host = new Host(name, namespace, address);
    hosts.add(host);
    return host;
  }

  /** Drops every packet between {@code a} and {@code b}, both ways, until {@link #heal()}. */
  void cut(Host a, Host b) throws IOException, InterruptedException {
    if (cuts.add(List.of(a, b))) {
      Command.run("ip", "-n", a.namespace(), "route", "add", "blackhole", b.address() + "/32");
      Command.run("ip", "-n", b.namespace(), "route", "add", "blackhole", a.address() + "/32");
    }
  }

  /** Removes every partition. */
  void heal() throws IOException, InterruptedException {
    for (List<Host> cut : cuts) {
      Command.run(
          "ip",
          "-n",
          cut.get(0).namespace(),
          "route",
          "del",
          "blackhole",
          cut.get(1).address() + "/32");
      Command.run(
          "ip",
          "-n",
          cut.get(1).namespace(),
          "route",
          "del",
          "blackhole",
          cut.get(0).address() + "/32");
    }
    cuts.clear();
  }

  @Override
  public void close() throws IOException, InterruptedException {
    for (Host host : hosts) {
      Command.attempt("ip", "netns", "del", host.namespace());
    }
    Command.attempt("ip", "link", "del", bridge);
  }

  /** Deletes the namespaces and bridges of test JVMs that are gone. */
  private static void removeLeftovers() throws IOException, InterruptedException {
    for (String line : Command.run("ip", "netns", "list").split("\n")) {
      Matcher matcher = OURS.matcher(line.strip());
      if (matcher.find() && !alive(matcher.group(1))) {
        Command.attempt("ip", "netns", "del", matcher.group().split(" ")[0]);
        Command.attempt("ip", "link", "del", "tlb" + matcher.group(1));
      }
    }
  }

  private static boolean alive(String pid) {
    return ProcessHandle.of(Long.parseLong(pid)).map(ProcessHandle::isAlive).orElse(false);
  }
}
