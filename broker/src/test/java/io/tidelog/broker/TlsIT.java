package io.tidelog.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.tidelog.broker.config.BrokerConfig;
import io.tidelog.broker.config.Listener;
import io.tidelog.broker.security.SslEngineSource;
import java.math.BigInteger;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSession;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.config.SslConfigs;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.errors.SslAuthenticationException;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * An SSL listener with mutual TLS beside the PLAINTEXT one, against kafka-clients: records go both
 * ways over TLS (fetched from segment files, which TLS cannot sendfile), Metadata on the SSL
 * listener names the SSL endpoints, a client certificate of another authority and a client without
 * one are refused and counted while the broker serves everyone else, and the broker's keystore is
 * replaced twice under a producer and a consumer running on the SASL_SSL listener, which see no
 * error while both TLS listeners move to each new certificate. kafka-configs moves one listener to
 * another keystore file at run time, as in Kafka, and Kafka's checks refuse a certificate of
 * another name and the changes Kafka refuses.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TlsIT {
  @TempDir static Path dir;
  static TestCertificates.Authority ca;
  static Path brokerKeystore;
  static Path truststore;
  static Path clientKeystore;
  static int sslPort;
  static int saslSslPort;
  static int plainPort;
  static TestBroker broker;
  static Map<String, String> config;

  /** Configs the broker gets besides the listeners' own. */
  Map<String, String> extraConfigs() {
    return Map.of();
  }

  /** The class of the TLS engines the configs give: the JDK's by default. */
  String expectedEngine() {
    return "sun.security.ssl.SSLEngineImpl";
  }

  @Test
  void theListenersGetEnginesOfTheConfiguredFactory() throws Exception {
    Map<String, String> raw = new HashMap<>(config);
    raw.put("node.id", "0");
    raw.put("log.dirs", dir.resolve("unused").toString());
    BrokerConfig parsed = BrokerConfig.parse(raw);
    int secured = 0;
    for (Listener listener : parsed.listeners().bound()) {
      if (listener.protocol() == SecurityProtocol.SSL
          || listener.protocol() == SecurityProtocol.SASL_SSL) {
        SslEngineSource engines = new SslEngineSource(listener.name(), parsed.security(listener));
        assertThat(engines.serverEngine().getClass().getName())
            .as(listener.name())
            .isEqualTo(expectedEngine());
        secured++;
      }
    }
    assertThat(secured).isEqualTo(2);
    assertThat(served(sslPort).getProtocol()).isEqualTo("TLSv1.3");
  }

  @BeforeAll
  void start() throws Exception {
    Map<String, String> extra = extraConfigs();
    ca = TestCertificates.authority("tidelog-test-ca");
    brokerKeystore = ca.issue("broker-0").writeKeystore(dir.resolve("broker.p12"));
    truststore = ca.writeTruststore(dir.resolve("truststore.p12"));
    clientKeystore = ca.issue("alice").writeKeystore(dir.resolve("alice.p12"));
    sslPort = EtcdServer.freePort();
    saslSslPort = EtcdServer.freePort();
    plainPort = EtcdServer.freePort();
    config = new HashMap<>();
    config.put(
        "listeners",
        "PLAINTEXT://127.0.0.1:"
            + plainPort
            + ",SSL://127.0.0.1:"
            + sslPort
            + ",SASL_SSL://127.0.0.1:"
            + saslSslPort);
    config.put("sasl.enabled.mechanisms", "PLAIN");
    config.put("listener.name.sasl_ssl.plain.sasl.jaas.config", SaslIT.JAAS_PLAIN);
    config.put("ssl.keystore.location", brokerKeystore.toString());
    config.put("ssl.keystore.password", TestCertificates.PASSWORD);
    config.put("ssl.key.password", TestCertificates.PASSWORD);
    config.put("ssl.truststore.location", truststore.toString());
    config.put("ssl.truststore.password", TestCertificates.PASSWORD);
    config.put("listener.name.ssl.ssl.client.auth", "required");
    config.putAll(extra);
    broker = TestBroker.start(dir.resolve("logs"), config);
  }

  @AfterAll
  static void stop() throws Exception {
    broker.close();
  }

  private static Properties ssl(Path keystore, Path trusted) {
    Properties p = new Properties();
    p.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + sslPort);
    p.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SSL");
    p.put(SslConfigs.SSL_TRUSTSTORE_LOCATION_CONFIG, trusted.toString());
    p.put(SslConfigs.SSL_TRUSTSTORE_PASSWORD_CONFIG, TestCertificates.PASSWORD);
    if (keystore != null) {
      p.put(SslConfigs.SSL_KEYSTORE_LOCATION_CONFIG, keystore.toString());
      p.put(SslConfigs.SSL_KEYSTORE_PASSWORD_CONFIG, TestCertificates.PASSWORD);
      p.put(SslConfigs.SSL_KEY_PASSWORD_CONFIG, TestCertificates.PASSWORD);
    }
    p.put(CommonClientConfigs.RECONNECT_BACKOFF_MAX_MS_CONFIG, "1000");
    return p;
  }

  /** Alice over SASL_SSL with PLAIN: the broker shows its certificate, the client none. */
  private static Properties saslSsl() {
    Properties p = new Properties();
    p.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + saslSslPort);
    p.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SASL_SSL");
    p.put(SslConfigs.SSL_TRUSTSTORE_LOCATION_CONFIG, truststore.toString());
    p.put(SslConfigs.SSL_TRUSTSTORE_PASSWORD_CONFIG, TestCertificates.PASSWORD);
    p.put(SaslConfigs.SASL_MECHANISM, "PLAIN");
    p.put(
        SaslConfigs.SASL_JAAS_CONFIG,
        "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"alice\""
            + " password=\"alice-secret\";");
    p.put(CommonClientConfigs.RECONNECT_BACKOFF_MAX_MS_CONFIG, "1000");
    return p;
  }

  private static KafkaProducer<byte[], byte[]> producer(Properties ssl) {
    Properties p = new Properties();
    p.putAll(ssl);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
    return new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
  }

  private static KafkaConsumer<byte[], byte[]> consumer(Properties ssl) {
    Properties p = new Properties();
    p.putAll(ssl);
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    p.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, String.valueOf(4 << 20));
    return new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer());
  }

  @Test
  void recordsGoBothWaysOverMutualTlsAndMetadataNamesTheSslEndpoints() throws Exception {
    Properties alice = ssl(clientKeystore, truststore);
    try (Admin admin = Admin.create(alice)) {
      admin.createTopics(List.of(new NewTopic("tls", 1, (short) 1))).all().get();
      assertThat(admin.describeCluster().nodes().get())
          .extracting(Node::port)
          .containsExactly(sslPort);
    }
    int count = 2_000;
    byte[] value = new byte[1_000]; // 2 MB: many TLS chunks of segment file
    for (int i = 0; i < value.length; i++) {
      value[i] = (byte) i;
    }
    try (KafkaProducer<byte[], byte[]> producer = producer(alice)) {
      for (int i = 0; i < count; i++) {
        producer.send(new ProducerRecord<>("tls", String.valueOf(i).getBytes(), value));
      }
      producer.flush();
    }
    List<ConsumerRecord<byte[], byte[]>> read = new ArrayList<>();
    try (KafkaConsumer<byte[], byte[]> consumer = consumer(alice)) {
      consumer.assign(List.of(new org.apache.kafka.common.TopicPartition("tls", 0)));
      await()
          .atMost(Duration.ofMinutes(1))
          .until(
              () -> {
                consumer.poll(Duration.ofMillis(200)).forEach(read::add);
                return read.size() >= count;
              });
    }
    assertThat(read).hasSize(count);
    for (int i = 0; i < count; i++) {
      assertThat(new String(read.get(i).key())).isEqualTo(String.valueOf(i));
      assertThat(read.get(i).value()).isEqualTo(value);
    }
  }

  @Test
  void clientsWithoutATrustedCertificateAreRefusedAndCountedWhileOthersAreServed()
      throws Exception {
    double failedBefore = failedAuthentications();
    Path otherKeystore =
        TestCertificates.authority("another-ca")
            .issue("mallory")
            .writeKeystore(dir.resolve("m.p12"));
    for (Path keystore : new Path[] {otherKeystore, null}) {
      Properties props = ssl(keystore, truststore);
      props.put(CommonClientConfigs.DEFAULT_API_TIMEOUT_MS_CONFIG, "20000");
      props.put(CommonClientConfigs.REQUEST_TIMEOUT_MS_CONFIG, "10000");
      try (Admin refused = Admin.create(props)) {
        ExecutionException e =
            assertThrows(ExecutionException.class, () -> refused.describeCluster().nodes().get());
        assertThat(e.getCause()).isInstanceOf(SslAuthenticationException.class);
      }
    }
    await().atMost(Duration.ofSeconds(30)).until(() -> failedAuthentications() >= failedBefore + 2);
    try (Admin admin = Admin.create(ssl(clientKeystore, truststore))) {
      assertThat(admin.describeCluster().nodes().get()).hasSize(1);
    }
  }

  @Test
  void aReplacedKeystoreServesNewConnectionsWhileRunningSaslSslClientsSeeNoError()
      throws Exception {
    String topic = "rotation";
    Properties alice = saslSsl();
    try (Admin admin = Admin.create(alice)) {
      admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
    }
    AtomicBoolean running = new AtomicBoolean(true);
    AtomicLong acked = new AtomicLong();
    AtomicInteger consumed = new AtomicInteger();
    AtomicReference<Throwable> error = new AtomicReference<>();
    Thread producing =
        new Thread(
            () -> {
              try (KafkaProducer<byte[], byte[]> producer = producer(alice)) {
                // paced (at most 100 sends per 10 ms) and bounded by time, not by a count a
                // fast machine would use up before the second rotation
                long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(10);
                for (int i = 0; running.get() && System.nanoTime() < deadline; i++) {
                  producer.send(
                      new ProducerRecord<>(topic, new byte[100]),
                      (metadata, e) -> {
                        if (e != null) {
                          error.compareAndSet(null, e);
                        } else {
                          acked.incrementAndGet();
                        }
                      });
                  if (i % 100 == 0) {
                    producer.flush();
                    Thread.sleep(10);
                  }
                }
                producer.flush();
              } catch (Throwable e) {
                error.compareAndSet(null, e);
              }
            });
    Thread consuming =
        new Thread(
            () -> {
              try (KafkaConsumer<byte[], byte[]> consumer = consumer(alice)) {
                consumer.assign(List.of(new org.apache.kafka.common.TopicPartition(topic, 0)));
                long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(10);
                while (running.get() && System.nanoTime() < deadline) {
                  consumed.addAndGet(consumer.poll(Duration.ofMillis(100)).count());
                }
              } catch (Throwable e) {
                error.compareAndSet(null, e);
              }
            });
    producing.start();
    consuming.start();
    try {
      BigInteger first = servedSerial(sslPort);
      assertThat(servedSerial(saslSslPort)).isEqualTo(first);
      for (int rotation = 1; rotation <= 2; rotation++) {
        long ackedBefore = acked.get();
        TestCertificates.Issued next = ca.issue("broker-0-rotation-" + rotation);
        next.writeKeystore(brokerKeystore);
        await()
            .atMost(Duration.ofMinutes(1))
            .until(
                () ->
                    servedSerial(sslPort).equals(next.certificate().getSerialNumber())
                        && servedSerial(saslSslPort).equals(next.certificate().getSerialNumber()));
        // the running producer goes on: a flush's worth of acknowledgements (it flushes every
        // 100 sends) after the new certificate, as the machine's load lets it
        try {
          await()
              .atMost(Duration.ofMinutes(2))
              .until(() -> acked.get() >= ackedBefore + 200 || error.get() != null);
        } catch (org.awaitility.core.ConditionTimeoutException e) {
          throw new AssertionError(
              "after rotation "
                  + rotation
                  + " the producer's acknowledgements went from "
                  + ackedBefore
                  + " to "
                  + acked.get()
                  + " only; consumed "
                  + consumed.get(),
              e);
        }
        assertThat(error.get()).as("the running clients' error").isNull();
      }
      assertThat(servedSerial(saslSslPort)).isNotEqualTo(first);
    } finally {
      running.set(false);
      producing.join(TimeUnit.MINUTES.toMillis(1));
      consuming.join(TimeUnit.MINUTES.toMillis(1));
    }
    assertThat(error.get()).isNull();
    assertThat(acked.get()).isGreaterThanOrEqualTo(400);
    await().atMost(Duration.ofMinutes(1)).until(() -> endOffset(topic) == acked.get());
  }

  @Test
  void kafkaConfigsMovesOneListenerToAnotherKeystoreAndKafkasChecksRefuseTheRest()
      throws Exception {
    X509Certificate before = servedCertificate(sslPort);
    BigInteger otherListener = servedSerial(saslSslPort);
    String commonName =
        new javax.naming.ldap.LdapName(before.getSubjectX500Principal().getName())
            .getRdns().stream()
                .filter(rdn -> rdn.getType().equals("CN"))
                .map(rdn -> rdn.getValue().toString())
                .findFirst()
                .orElseThrow();
    TestCertificates.Issued renewed = ca.issue(commonName);
    Path renewedKeystore = renewed.writeKeystore(dir.resolve("renewed.p12"));
    ConfigResource broker0 = new ConfigResource(ConfigResource.Type.BROKER, "0");
    String key = "listener.name.ssl.ssl.keystore.location";
    try (Admin admin = Admin.create(ssl(clientKeystore, truststore))) {
      try {
        ApacheKafka.ToolRun alter =
            ApacheKafka.tool(
                "",
                "kafka.admin.ConfigCommand",
                "--bootstrap-server",
                "127.0.0.1:" + plainPort,
                "--entity-type",
                "brokers",
                "--entity-name",
                "0",
                "--alter",
                "--add-config",
                key + "=" + renewedKeystore);
        assertThat(alter.exitStatus()).as(alter.output()).isZero();
        await()
            .atMost(Duration.ofMinutes(1))
            .until(() -> servedSerial(sslPort).equals(renewed.certificate().getSerialNumber()));
        assertThat(servedSerial(saslSslPort))
            .as("the other listener keeps its keystore")
            .isEqualTo(otherListener);
        ConfigEntry entry =
            admin.describeConfigs(List.of(broker0)).all().get().get(broker0).get(key);
        assertThat(entry.value()).isEqualTo(renewedKeystore.toString());
        assertThat(entry.source()).isEqualTo(ConfigEntry.ConfigSource.DYNAMIC_BROKER_CONFIG);
        assertThat(entry.isReadOnly()).isFalse();

        Path renamed = ca.issue(commonName + "-renamed").writeKeystore(dir.resolve("renamed.p12"));
        Path missing = dir.resolve("no-such-keystore.p12");
        // each refused change: key, value, and what Kafka's message says
        for (List<String> refused :
            List.of(
                List.of(key, renamed.toString(), "DistinguishedName does not match"),
                List.of(key, missing.toString(), "no-such-keystore.p12"),
                List.of(
                    "ssl.keystore.location",
                    renewedKeystore.toString(),
                    "only per-listener using the listener prefix"),
                List.of(
                    "listener.name.ssl.ssl.cipher.suites",
                    "TLS_AES_128_GCM_SHA256",
                    "cannot be updated dynamically for existing listener"))) {
          ExecutionException e =
              assertThrows(
                  ExecutionException.class,
                  () -> DynamicBrokerConfigIT.alter(admin, "0", refused.get(0), refused.get(1)));
          assertThat(e.getCause())
              .as(refused.toString())
              .isInstanceOf(InvalidRequestException.class)
              .hasMessageContaining(refused.get(2));
        }
        ExecutionException atDefault =
            assertThrows(
                ExecutionException.class,
                () -> DynamicBrokerConfigIT.alter(admin, "", key, renewedKeystore.toString()));
        assertThat(atDefault.getCause())
            .isInstanceOf(InvalidRequestException.class)
            .hasMessageContaining("broker id must be specified");
        assertThat(servedSerial(sslPort)).isEqualTo(renewed.certificate().getSerialNumber());
      } finally {
        DynamicBrokerConfigIT.alter(admin, "0", key, null);
      }
      await()
          .atMost(Duration.ofMinutes(1))
          .until(() -> servedSerial(sslPort).equals(servedSerial(saslSslPort)));
    }
  }

  private static long endOffset(String topic) throws Exception {
    try (KafkaConsumer<byte[], byte[]> consumer = consumer(ssl(clientKeystore, truststore))) {
      org.apache.kafka.common.TopicPartition tp =
          new org.apache.kafka.common.TopicPartition(topic, 0);
      return consumer.endOffsets(List.of(tp)).get(tp);
    }
  }

  /** The serial number of the certificate a new TLS connection to {@code port} is shown. */
  private static BigInteger servedSerial(int port) throws Exception {
    return servedCertificate(port).getSerialNumber();
  }

  private static X509Certificate servedCertificate(int port) throws Exception {
    return (X509Certificate) served(port).getPeerCertificates()[0];
  }

  /** The session a new TLS connection to {@code port} gets. */
  private static SSLSession served(int port) throws Exception {
    KeyStore trusted = KeyStore.getInstance("PKCS12");
    try (var in = java.nio.file.Files.newInputStream(truststore)) {
      trusted.load(in, TestCertificates.PASSWORD.toCharArray());
    }
    KeyStore own = KeyStore.getInstance("PKCS12");
    try (var in = java.nio.file.Files.newInputStream(clientKeystore)) {
      own.load(in, TestCertificates.PASSWORD.toCharArray());
    }
    TrustManagerFactory trust = TrustManagerFactory.getInstance("PKIX");
    trust.init(trusted);
    javax.net.ssl.KeyManagerFactory keys = javax.net.ssl.KeyManagerFactory.getInstance("PKIX");
    keys.init(own, TestCertificates.PASSWORD.toCharArray());
    SSLContext context = SSLContext.getInstance("TLS");
    context.init(keys.getKeyManagers(), trust.getTrustManagers(), null);
    try (SSLSocket socket =
        (SSLSocket) context.getSocketFactory().createSocket("127.0.0.1", port)) {
      socket.setSoTimeout(10_000);
      socket.startHandshake();
      return socket.getSession();
    }
  }

  private static double failedAuthentications() throws Exception {
    Double value =
        Scrape.of(broker.httpPort).value("tidelog_failed_authentication_total", "listener", "SSL");
    return value == null ? 0 : value;
  }
}
