package io.tidelog.bench;

import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import io.netty.handler.ssl.util.InsecureTrustManagerFactory;
import io.netty.util.ReferenceCountUtil;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLEngineResult.HandshakeStatus;
import javax.net.ssl.SSLException;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.SslConfigs;
import org.apache.kafka.common.security.ssl.DefaultSslEngineFactory;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What a TLS engine costs per byte, on one thread: a client engine seals 16 KiB of application data
 * into TLS records (what a producer's socket carries) and the server engine opens them, after one
 * in-memory handshake, on TLS 1.3. {@code jdk} is the engine Kafka's {@link
 * DefaultSslEngineFactory} makes (the one Kafka brokers use, and Tidelog's); {@code openssl} is
 * Netty's OpenSSL engine over netty-tcnative's BoringSSL, given the same key and certificate. The
 * handshake is not measured, so the OpenSSL client does not check the certificate. Each run prints
 * the suite negotiated. Reported as bytes per second of application data through the {@code bytes}
 * counter; {@code bench/run-tls-bench} runs it.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
@State(Scope.Thread)
public class TlsEngineBenchmark {
  private static final int APPLICATION_BYTES = 16 * 1024;
  private static final String PASSWORD = "bench-password";

  /**
   * {@code jdk}: Kafka's engine with its default suites (the JDK's first is
   * TLS_AES_256_GCM_SHA384); {@code jdk-aes128}: the same, held to TLS_AES_128_GCM_SHA256, which
   * BoringSSL picks (its TLS 1.3 suites cannot be configured); {@code openssl}: Netty over
   * BoringSSL.
   */
  @Param({"jdk", "jdk-aes128", "openssl"})
  public String engine;

  private Path dir;
  private SSLEngine client;
  private SSLEngine server;
  private ByteBuffer application;
  private ByteBuffer sealed;
  private ByteBuffer opened;
  private String negotiated;

  /** Application bytes moved, as a rate. */
  @State(Scope.Thread)
  @AuxCounters(AuxCounters.Type.OPERATIONS)
  public static class Moved {
    public long bytes;

    @Setup(Level.Iteration)
    public void reset() {
      bytes = 0;
    }
  }

  @Setup(Level.Trial)
  public void setUp() throws Exception {
    dir = Files.createTempDirectory("tls-bench");
    Path keystore = dir.resolve("broker.p12");
    Path certificate = dir.resolve("broker.pem");
    Path truststore = dir.resolve("truststore.p12");
    keytool(
        "-genkeypair",
        "-alias",
        "broker",
        "-keyalg",
        "EC",
        "-groupname",
        "secp256r1",
        "-dname",
        "CN=broker",
        "-validity",
        "2",
        "-storetype",
        "PKCS12",
        "-keystore",
        keystore.toString(),
        "-storepass",
        PASSWORD,
        "-keypass",
        PASSWORD);
    keytool(
        "-exportcert",
        "-rfc",
        "-alias",
        "broker",
        "-keystore",
        keystore.toString(),
        "-storepass",
        PASSWORD,
        "-file",
        certificate.toString());
    keytool(
        "-importcert",
        "-noprompt",
        "-alias",
        "broker",
        "-file",
        certificate.toString(),
        "-storetype",
        "PKCS12",
        "-keystore",
        truststore.toString(),
        "-storepass",
        PASSWORD);
    Map<String, Object> given = new HashMap<>();
    given.put(SslConfigs.SSL_KEYSTORE_LOCATION_CONFIG, keystore.toString());
    given.put(SslConfigs.SSL_KEYSTORE_PASSWORD_CONFIG, PASSWORD);
    given.put(SslConfigs.SSL_KEY_PASSWORD_CONFIG, PASSWORD);
    given.put(SslConfigs.SSL_TRUSTSTORE_LOCATION_CONFIG, truststore.toString());
    given.put(SslConfigs.SSL_TRUSTSTORE_PASSWORD_CONFIG, PASSWORD);
    given.put(SslConfigs.SSL_ENABLED_PROTOCOLS_CONFIG, "TLSv1.3");
    given.put(SslConfigs.SSL_PROTOCOL_CONFIG, "TLSv1.3");
    if (engine.equals("jdk-aes128")) {
      given.put(SslConfigs.SSL_CIPHER_SUITES_CONFIG, "TLS_AES_128_GCM_SHA256");
    }
    ConfigDef definitions = new ConfigDef();
    SslConfigs.addClientSslSupport(definitions);
    Map<String, Object> configs = definitions.parse(given);
    DefaultSslEngineFactory kafka = new DefaultSslEngineFactory();
    kafka.configure(configs);
    if (engine.startsWith("jdk")) {
      server = kafka.createServerSslEngine(null, -1);
      client = kafka.createClientSslEngine("127.0.0.1", 9093, "");
    } else {
      KeyManagerFactory keys = KeyManagerFactory.getInstance("PKIX");
      keys.init(kafka.keystore(), PASSWORD.toCharArray());
      server =
          SslContextBuilder.forServer(keys)
              .sslProvider(SslProvider.OPENSSL_REFCNT)
              .protocols("TLSv1.3")
              .build()
              .newEngine(ByteBufAllocator.DEFAULT);
      client =
          SslContextBuilder.forClient()
              .trustManager(InsecureTrustManagerFactory.INSTANCE)
              .sslProvider(SslProvider.OPENSSL_REFCNT)
              .protocols("TLSv1.3")
              .build()
              .newEngine(ByteBufAllocator.DEFAULT, "127.0.0.1", 9093);
    }
    kafka.close();
    int packet = Math.max(client.getSession().getPacketBufferSize(), 1 << 15);
    application = ByteBuffer.allocateDirect(APPLICATION_BYTES);
    sealed = ByteBuffer.allocateDirect(packet * 4);
    opened = ByteBuffer.allocateDirect(APPLICATION_BYTES + packet * 4);
    handshake();
    negotiated = client.getSession().getProtocol() + " " + client.getSession().getCipherSuite();
    System.out.println("\n" + engine + ": " + negotiated);
  }

  private static void keytool(String... args) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(List.of("keytool"));
    command.addAll(List.of(args));
    Process keytool = new ProcessBuilder(command).redirectErrorStream(true).start();
    String output = new String(keytool.getInputStream().readAllBytes());
    if (!keytool.waitFor(60, TimeUnit.SECONDS) || keytool.exitValue() != 0) {
      throw new IOException("keytool " + args[0] + " failed: " + output);
    }
  }

  @TearDown(Level.Trial)
  public void tearDown() throws IOException {
    ReferenceCountUtil.safeRelease(client);
    ReferenceCountUtil.safeRelease(server);
    try (var files = Files.list(dir)) {
      for (Path file : files.toList()) {
        Files.delete(file);
      }
    }
    Files.delete(dir);
  }

  /** Seals 16 KiB on the client and opens it on the server. */
  @Benchmark
  public void sealAndOpen(Moved moved) throws SSLException {
    application.clear();
    sealed.clear();
    while (application.hasRemaining()) {
      check(client.wrap(application, sealed));
    }
    sealed.flip();
    opened.clear();
    while (sealed.hasRemaining()) {
      check(server.unwrap(sealed, opened));
    }
    moved.bytes += opened.position();
  }

  private static void check(SSLEngineResult result) throws SSLException {
    if (result.getStatus() != SSLEngineResult.Status.OK) {
      throw new SSLException("unexpected " + result);
    }
  }

  /** Runs both engines' handshake in memory, for at most 1,000 exchanges. */
  private void handshake() throws SSLException {
    ByteBuffer toServer = ByteBuffer.allocate(1 << 17);
    ByteBuffer toClient = ByteBuffer.allocate(1 << 17);
    ByteBuffer scratch = ByteBuffer.allocate(1 << 17);
    client.beginHandshake();
    server.beginHandshake();
    for (int step = 0; step < 1_000; step++) {
      if (done(client.getHandshakeStatus())
          && done(server.getHandshakeStatus())
          && toServer.position() == 0
          && toClient.position() == 0) {
        return;
      }
      step(client, toServer, toClient, scratch);
      step(server, toClient, toServer, scratch);
    }
    throw new SSLException(
        "handshake did not finish: "
            + client.getHandshakeStatus()
            + " "
            + server.getHandshakeStatus());
  }

  private static boolean done(HandshakeStatus status) {
    return status == HandshakeStatus.NOT_HANDSHAKING || status == HandshakeStatus.FINISHED;
  }

  /** One move of {@code engine}: run its tasks, write what it has to say, read what came in. */
  private static void step(SSLEngine engine, ByteBuffer out, ByteBuffer in, ByteBuffer scratch)
      throws SSLException {
    Runnable task;
    while ((task = engine.getDelegatedTask()) != null) {
      task.run();
    }
    // Whatever the status says: OpenSSL's engine holds handshake messages it reports no need for
    {
      try {
        engine.wrap(ByteBuffer.allocate(0), out);
      } catch (SSLException e) {
        throw new SSLException((engine.getUseClientMode() ? "client" : "server") + " wrap", e);
      }
    }
    in.flip();
    if (in.hasRemaining()) {
      scratch.clear();
      try {
        engine.unwrap(in, scratch);
      } catch (SSLException e) {
        throw new SSLException((engine.getUseClientMode() ? "client" : "server") + " unwrap", e);
      }
    }
    in.compact();
  }
}
