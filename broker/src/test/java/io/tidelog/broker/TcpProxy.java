package io.tidelog.broker;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A TCP forwarder on a free loopback port in front of one target, that a test can cut off and
 * restore: a network partition between a client and a server on one machine. Two kinds: {@link
 * #cut()} closes every connection (as a firewall that rejects, or a peer that restarted), so the
 * client reconnects afterwards; {@link #hold()} keeps the connections open but carries no byte
 * until restored (as a network that drops packets, with TCP retransmitting), so the client's
 * connection resumes where it stopped.
 */
public final class TcpProxy implements AutoCloseable {
  private final ServerSocket server;
  private final int targetPort;
  private final Set<Socket> open = ConcurrentHashMap.newKeySet();
  private volatile boolean cut;
  private boolean held;

  private TcpProxy(ServerSocket server, int targetPort) {
    this.server = server;
    this.targetPort = targetPort;
  }

  public static TcpProxy start(int targetPort) throws IOException {
    TcpProxy proxy =
        new TcpProxy(new ServerSocket(0, 50, InetAddress.getLoopbackAddress()), targetPort);
    Thread acceptor = new Thread(proxy::acceptLoop, "tcp-proxy-" + targetPort);
    acceptor.setDaemon(true);
    acceptor.start();
    return proxy;
  }

  public int port() {
    return server.getLocalPort();
  }

  /** Closes every connection through the proxy and every new one, until {@link #restore()}. */
  public void cut() {
    cut = true;
    open.forEach(TcpProxy::closeQuietly);
    open.clear();
  }

  /** Carries no byte either way, connections kept open, until {@link #restore()}. */
  public synchronized void hold() {
    held = true;
  }

  public synchronized void restore() {
    cut = false;
    held = false;
    notifyAll();
  }

  /** Waits while held, up to a minute: a test that never restores still ends. */
  private synchronized void awaitFlowing() throws InterruptedException {
    long deadline = System.nanoTime() + 60_000_000_000L;
    while (held && System.nanoTime() < deadline) {
      wait(1_000);
    }
  }

  private void acceptLoop() {
    while (!server.isClosed()) {
      try {
        Socket client = server.accept();
        if (cut) {
          closeQuietly(client);
          continue;
        }
        Socket target = new Socket(InetAddress.getLoopbackAddress(), targetPort);
        open.add(client);
        open.add(target);
        pump(client, target);
        pump(target, client);
      } catch (IOException e) {
        // closed, or the target refused: the client sees its connection drop
      }
    }
  }

  private void pump(Socket from, Socket to) {
    Thread thread =
        new Thread(
            () -> {
              byte[] buffer = new byte[16 * 1024];
              try (InputStream in = from.getInputStream();
                  OutputStream out = to.getOutputStream()) {
                for (int n; (n = in.read(buffer)) >= 0; ) {
                  awaitFlowing();
                  out.write(buffer, 0, n);
                }
              } catch (IOException e) {
                // either side went away
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              } finally {
                closeQuietly(from);
                closeQuietly(to);
                open.remove(from);
                open.remove(to);
              }
            },
            "tcp-proxy-pump");
    thread.setDaemon(true);
    thread.start();
  }

  private static void closeQuietly(Socket socket) {
    try {
      socket.close();
    } catch (IOException e) {
      // already closed
    }
  }

  @Override
  public void close() throws IOException {
    server.close();
    cut();
    synchronized (this) {
      held = false;
      notifyAll();
    }
  }
}
