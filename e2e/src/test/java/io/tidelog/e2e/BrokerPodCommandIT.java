package io.tidelog.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.tidelog.operator.OperatorSettings;
import io.tidelog.operator.OperatorSettings.Controller;
import io.tidelog.operator.api.Cluster;
import io.tidelog.operator.api.Conditions;
import io.tidelog.operator.api.User;
import io.tidelog.operator.brokers.BrokerAccess;
import io.tidelog.operator.certificates.CertificateAuthority;
import io.tidelog.operator.certificates.Pem;
import io.tidelog.operator.cluster.ClusterModel;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Brokers and etcd run from exactly what the operator made for a Cluster: the containers' commands
 * and environment, the server.properties of its ConfigMap, its Secrets as files (kept up to date as
 * the kubelet keeps a mounted Secret, every half second here), and the image's entry point {@code
 * broker/docker/broker}, with only their network addresses and data directories moved to loopback
 * and a temporary directory. Moving the addresses to 127.0.0.1, which their certificates do not
 * name, is why hostname verification (between brokers, and of etcd) is off here; the rest of the
 * mutual TLS holds: only certificates of the cluster CA get in, to the replication listener and to
 * etcd. ACLs are on: the brokers and the operator are super users by their certificates; clients
 * are Users, their credentials and ACLs made by the operator.
 */
class BrokerPodCommandIT {
  private static final String NS = "kafka";
  private static final int BROKERS = 3;
  private static final Duration SECRET_PROPAGATION = Duration.ofSeconds(8);
  private static final int RECORDS_MAX = 20_000;

  @TempDir Path dir;

  @Test
  void saslSslUsersProduceAndConsumeThroughACaRenewalOfBrokersAndEtcd() throws Exception {
    try {
      int[] plain = ports();
      int[] replication = ports();
      int[] http = ports();
      int[] mtls = ports();
      int[] scram = ports();
      int[] ext = ports();
      String bootstrap = loopback(plain);
      List<Process> processes = new ArrayList<>();
      ScheduledExecutorService kubelet = Executors.newScheduledThreadPool(2);
      EtcdPod etcd =
          new EtcdPod(dir, LoopbackPorts.free(), LoopbackPorts.free(), LoopbackPorts.free());
      try (MockKubernetes kubernetes = new MockKubernetes(settings(bootstrap, replication[0]))) {
        KubernetesClient client = kubernetes.client;
        CertificateAuthority publicCa =
            CertificateAuthority.create("public-ca", Instant.now(), Duration.ofDays(90));
        writePublicCertificate(client, publicCa);
        // Given a Cluster of three brokers spread over zones, with a managed etcd, and a listener
        // that presents a certificate of the user's own (as cert-manager would keep in a Secret),
        client
            .resource(
                Resources.cluster(
                    NS,
                    "dev",
                    """
                  replicas: %d
                  storage: {size: 1Gi}
                  jvm: {heap: 256m}
                  rack: {topologyKey: topology.kubernetes.io/zone}
                  authorization: {type: simple}
                  listeners:
                    - {name: plain, port: 9092}
                    - {name: mtls, port: 9093, tls: true, authentication: {type: tls}}
                    - {name: scram, port: 9094, tls: true, authentication: {type: scram-sha-512}}
                    - name: ext
                      port: 9095
                      tls: true
                      authentication: {type: scram-sha-512}
                      configuration:
                        brokerCertChainAndKey: {secretName: public-cert, certificate: tls.crt, key: tls.key}
                  etcd: {replicas: 1}
                  """
                        .formatted(BROKERS)))
            .create();
        StatefulSet brokers =
            await()
                .atMost(Duration.ofSeconds(30))
                .until(
                    () -> client.apps().statefulSets().inNamespace(NS).withName("dev-broker").get(),
                    s -> s != null);
        ConfigMap config = client.configMaps().inNamespace(NS).withName("dev-config").get();
        Path etc = Files.createDirectories(dir.resolve("etc"));
        Path tls = dir.resolve("tls");
        Files.writeString(
            etc.resolve("server.properties"),
            local(config.getData().get("server.properties"), etc, tls));
        // whose Secrets the kubelet keeps as files,
        Map<String, Path> mounts =
            Map.of(
                "dev-broker-certs", tls.resolve("broker"),
                "dev-etcd-certs", tls.resolve("etcd"),
                "dev-listener-certs", tls.resolve("listeners"),
                "dev-cluster-ca-cert", tls.resolve("cluster-ca"),
                "dev-clients-ca-cert", tls.resolve("clients-ca"));
        await()
            .atMost(Duration.ofSeconds(30))
            .until(() -> mounts.keySet().stream().allMatch(s -> secret(client, s) != null));
        kubelet.scheduleWithFixedDelay(
            () -> mounts.forEach((secret, path) -> mount(secret(client, secret), path)),
            0,
            500,
            TimeUnit.MILLISECONDS);
        await()
            .atMost(Duration.ofSeconds(30))
            .until(
                () ->
                    Files.exists(tls.resolve("broker/dev-broker-2.pem"))
                        && Files.exists(tls.resolve("etcd/dev-etcd-0.crt")));
        // whose etcd member runs its pod's command, restarted whenever its template changes,
        kubelet.scheduleWithFixedDelay(
            () -> etcd.follow(client, tls), 0, 500, TimeUnit.MILLISECONDS);
        await().atMost(Duration.ofSeconds(60)).until(() -> etcd.starts() >= 1);

        // when each broker pod's command runs, pod 1 before the operator wrote its rack,
        Container container = brokers.getSpec().getTemplate().getSpec().getContainers().get(0);
        for (int id = 0; id < BROKERS; id++) {
          Path podinfo = Files.createDirectories(dir.resolve("podinfo-" + id));
          if (id != 1) {
            writeRack(podinfo, id == 0 ? "east" : "west");
          }
          processes.add(
              broker(
                  container,
                  id,
                  etc,
                  tls,
                  podinfo,
                  new int[] {plain[id], replication[id], http[id], mtls[id], scram[id], ext[id]},
                  etcd.clientPort));
        }
        try (Admin admin =
            Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
          // then pod 1 waits for its rack (the downward API's file of the pod's annotations),
          await()
              .atMost(Duration.ofSeconds(120))
              .ignoreExceptions()
              .until(() -> nodes(admin).keySet().contains(2));
          assertThat(processes.get(1).isAlive()).isTrue();
          assertThat(nodes(admin)).doesNotContainKey(1);
          writeRack(dir.resolve("podinfo-1"), "west");
          // and the brokers serve, in their racks, on an etcd that takes only the cluster CA's
          // certificates;
          await()
              .atMost(Duration.ofSeconds(120))
              .ignoreExceptions()
              .until(() -> nodes(admin).containsKey(1));
          assertThat(nodes(admin).get(0).rack()).isEqualTo("east");
          assertThat(nodes(admin).get(1).rack()).isEqualTo("west");
          assertThat(etcd.command())
              .contains("--client-cert-auth", "--peer-client-cert-auth")
              .anyMatch(arg -> arg.startsWith("--listen-client-urls=https://"));

          // ACLs are on: an anonymous client of the plain listener may not create a topic, while
          // the operator's certificate, on the replication listener, is a super user's;
          Cluster resource = client.resources(Cluster.class).inNamespace(NS).withName("dev").get();
          ExecutionException denied =
              assertThrows(
                  ExecutionException.class,
                  () ->
                      admin
                          .createTopics(List.of(new NewTopic("anonymous", 1, (short) 1)))
                          .all()
                          .get(30, TimeUnit.SECONDS));
          assertThat(denied.getCause()).isInstanceOf(TopicAuthorizationException.class);
          try (Admin operator = operatorAdmin(resource, client, replication[0])) {
            operator
                .createTopics(
                    List.of(
                        new NewTopic("replicated", 1, (short) 3)
                            .configs(Map.of("min.insync.replicas", "2"))))
                .all()
                .get(30, TimeUnit.SECONDS);
          }
          // a topic of three replicas is in sync over the mutual-TLS replication listener,
          await()
              .atMost(Duration.ofSeconds(120))
              .ignoreExceptions()
              .until(() -> isr(resource, client, replication[0]) == 3);

          // a SCRAM User with ACLs on it, and one with none, get their Secrets;
          createUser(
              client,
              "writer",
              """
            authentication: {type: scram-sha-512}
            authorization:
              type: simple
              acls:
                - resource: {type: topic, name: replicated}
                  operations: [Write, Read, Describe]
            """);
          createUser(client, "stranger", "authentication: {type: scram-sha-512}");
          Cluster ready = awaitListeners(client);
          String caSecret =
              ready.getStatus().listeners.stream()
                  .filter(l -> l.name.equals("scram"))
                  .findFirst()
                  .orElseThrow()
                  .caCertificateSecret;
          Map<String, Object> writer = scramClient(client, "writer", caSecret, loopback(scram));
          Map<String, Object> stranger = scramClient(client, "stranger", caSecret, loopback(scram));

          // the one without an ACL is refused the topic,
          try (KafkaProducer<String, String> refused =
              new KafkaProducer<>(
                  with(stranger, ProducerConfig.MAX_BLOCK_MS_CONFIG, 30_000),
                  new StringSerializer(),
                  new StringSerializer())) {
            ExecutionException noAcl =
                assertThrows(
                    ExecutionException.class,
                    () ->
                        refused
                            .send(new ProducerRecord<>("replicated", "refused"))
                            .get(60, TimeUnit.SECONDS));
            assertThat(noAcl.getCause()).isInstanceOf(TopicAuthorizationException.class);
          }

          // and a producer of the other, configured only from its Secret over SASL_SSL with
          // acks=all, goes on without an error while the cluster CA is renewed, in its three steps,
          // with no broker restarted and etcd rolled twice (to trust both CAs, then the new alone).
          AtomicBoolean stop = new AtomicBoolean();
          AtomicInteger acked = new AtomicInteger();
          List<Exception> errors = new java.util.concurrent.CopyOnWriteArrayList<>();
          Thread producing = new Thread(() -> produce(writer, stop, acked, errors), "producing");
          producing.start();
          await().atMost(Duration.ofSeconds(60)).until(() -> acked.get() >= 50);
          X509Certificate oldCa =
              Pem.certificates(text(secret(client, "dev-cluster-ca-cert"), "ca.crt")).get(0);
          int etcdStartsBefore = etcd.starts();
          Resources.edit(
              client.secrets().inNamespace(NS).withName("dev-cluster-ca"),
              s -> {
                s.getMetadata().getAnnotations().put("tidelog.io/force-renew", "true");
                return s;
              });
          await().atMost(Duration.ofSeconds(30)).until(() -> renewalStep(client) != null);
          await().atMost(Duration.ofSeconds(240)).until(() -> renewalStep(client) == null);
          await().atMost(Duration.ofSeconds(60)).until(() -> etcd.starts() >= etcdStartsBefore + 2);
          int afterRenewal = acked.get();
          await().atMost(Duration.ofSeconds(60)).until(() -> acked.get() >= afterRenewal + 50);
          stop.set(true);
          producing.join(TimeUnit.SECONDS.toMillis(120));
          System.out.printf(
              "BrokerPodCommandIT: %d records acknowledged over SASL_SSL, none failed, through a"
                  + " cluster CA renewal; etcd started %d times, no broker restarted%n",
              acked.get(), etcd.starts());
          assertThat(errors).isEmpty();
          assertThat(isr(resource, client, replication[0])).isEqualTo(3);
          // (a client started now trusts what the listener's CA Secret holds now)
          assertThat(consumed(scramClient(client, "writer", caSecret, loopback(scram))))
              .isEqualTo(acked.get());
          assertThat(processes).allMatch(Process::isAlive);
          for (int id = 0; id < BROKERS; id++) {
            // each broker took the renewal's files without a restart: trusted both, then its new
            // certificate, then the new CA alone; on the replication listener and towards etcd
            assertThat(Files.readString(dir.resolve("dev-broker-" + id + ".log")))
                .contains("Listener REPLICATION: new connections get the changed keystore")
                .contains("etcd connections now handshake with the changed TLS files")
                .doesNotContain("does not load");
          }

          // etcd, trusting the new CA alone, takes the brokers' new certificates: a topic is made;
          X509Certificate newCa =
              Pem.certificates(text(secret(client, "dev-cluster-ca-cert"), "ca.crt")).get(0);
          assertThat(newCa).isNotEqualTo(oldCa);
          assertThat(Pem.certificates(Files.readString(tls.resolve("cluster-ca/ca.crt"))))
              .containsExactly(newCa);
          try (Admin operator = operatorAdmin(resource, client, replication[0])) {
            operator
                .createTopics(List.of(new NewTopic("after-renewal", 1, (short) 3)))
                .all()
                .get(60, TimeUnit.SECONDS);
          }

          // The replication listener now presents the new CA's certificates and takes the
          // operator's new certificate, and only certificates of the cluster CA.
          assertThat(text(secret(client, "dev-operator-certs"), "operator.crt"))
              .isEqualTo(
                  Pem.of(
                      Pem.certificates(
                          text(secret(client, "dev-operator-certs"), "operator.pem"))));
          try (Admin operator = operatorAdmin(resource, client, replication[0])) {
            assertThat(operator.describeCluster().nodes().get(30, TimeUnit.SECONDS))
                .hasSize(BROKERS);
            assertThat(
                    BrokerAccess.mutualTls(resource, client, "unused")
                        .orElseThrow()
                        .security()
                        .get("ssl.truststore.certificates"))
                .isEqualTo(Pem.of(newCa));
          }
          CertificateAuthority foreignCa =
              CertificateAuthority.create("stranger", Instant.now(), Duration.ofDays(1));
          CertificateAuthority.Issued foreign =
              foreignCa.issue("dev-operator", List.of(), Instant.now(), Duration.ofDays(1));
          String foreignPem =
              Pem.of(foreign.key()) + Pem.of(foreign.certificate(), foreignCa.certificate());
          try (Admin refused = replicationAdmin(replication[0], foreignPem, Pem.of(newCa))) {
            assertThrows(
                ExecutionException.class,
                () -> refused.describeCluster().nodes().get(30, TimeUnit.SECONDS));
          }
          // The ext listener presents the user's certificate, and a renewed one (of another CA,
          // here) as soon as their Secret has it, with no restart.
          assertThat(sendsOver(with(writer, "bootstrap.servers", loopback(ext)), publicCa))
              .isTrue();
          CertificateAuthority renewedCa =
              CertificateAuthority.create("renewed-public-ca", Instant.now(), Duration.ofDays(90));
          writePublicCertificate(client, renewedCa);
          Resources.edit(
              client.resources(Cluster.class).inNamespace(NS).withName("dev"),
              c -> {
                c.getMetadata().getAnnotations().put("test/nudge", "renewed public certificate");
                return c;
              });
          await()
              .atMost(Duration.ofSeconds(60))
              .ignoreExceptions()
              .until(() -> sendsOver(with(writer, "bootstrap.servers", loopback(ext)), renewedCa));
          assertThat(processes).allMatch(Process::isAlive);

          // A tls User's Secret is all a producer on the mtls listener needs (as User:app).
          createUser(
              client,
              "app",
              """
            authentication: {type: tls}
            authorization:
              type: simple
              acls:
                - resource: {type: topic, name: replicated}
                  operations: [Write, Describe]
            """);
          Secret app = secret(client, "app");
          Path p12 = dir.resolve("app.p12");
          Files.write(p12, Base64.getDecoder().decode(app.getData().get("user.p12")));
          Map<String, Object> overMtls = new HashMap<>();
          overMtls.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + mtls[0]);
          overMtls.put("security.protocol", "SSL");
          overMtls.put("ssl.keystore.type", "PKCS12");
          overMtls.put("ssl.keystore.location", p12.toString());
          overMtls.put("ssl.keystore.password", text(app, "user.password"));
          overMtls.put("ssl.truststore.type", "PEM");
          overMtls.put("ssl.truststore.certificates", Pem.of(newCa));
          overMtls.put("ssl.endpoint.identification.algorithm", "");
          overMtls.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 30_000);
          try (KafkaProducer<String, String> producer =
              new KafkaProducer<>(overMtls, new StringSerializer(), new StringSerializer())) {
            assertThat(
                    producer
                        .send(new ProducerRecord<>("replicated", "over mtls"))
                        .get(60, TimeUnit.SECONDS)
                        .offset())
                .isGreaterThanOrEqualTo(acked.get());
          }
          assertThat(
                  Pem.certificates(text(app, "user.crt"))
                      .get(0)
                      .getSubjectX500Principal()
                      .getName())
              .isEqualTo("CN=app,O=tidelog.io");
          String probe = container.getReadinessProbe().getHttpGet().getPath();
          for (int port : http) {
            URI readiness = URI.create("http://127.0.0.1:" + port + probe);
            assertThat(
                    HttpClient.newHttpClient()
                        .send(
                            HttpRequest.newBuilder(readiness).build(),
                            HttpResponse.BodyHandlers.ofString())
                        .statusCode())
                .isEqualTo(200);
          }
        }
      } finally {
        kubelet.shutdownNow();
        kubelet.awaitTermination(30, TimeUnit.SECONDS);
        for (Process process : processes) {
          process.destroy();
          process.waitFor(60, TimeUnit.SECONDS);
        }
        etcd.stop();
      }
    } catch (Throwable failure) {
      LogTails.print(dir);
      throw failure;
    }
  }

  /**
   * Plays the StatefulSet controller and the kubelet for the one managed etcd member: runs its
   * container's command (addresses moved to loopback), and when the template changes (the CAs it
   * trusts), stops it and runs the new template's, then shows a Ready pod of that template.
   */
  private static final class EtcdPod {
    private final Path dir;
    final int clientPort;
    private final int peerPort;
    private final int metricsPort;
    private final AtomicInteger starts = new AtomicInteger();
    private volatile Process process;
    private volatile List<String> command = List.of();
    private String runningTrust;

    EtcdPod(Path dir, int clientPort, int peerPort, int metricsPort) {
      this.dir = dir;
      this.clientPort = clientPort;
      this.peerPort = peerPort;
      this.metricsPort = metricsPort;
    }

    int starts() {
      return starts.get();
    }

    List<String> command() {
      return command;
    }

    /** One step of the controller: nothing, or a restart on the current template. */
    void follow(KubernetesClient client, Path tls) {
      try {
        StatefulSet set = client.apps().statefulSets().inNamespace(NS).withName("dev-etcd").get();
        if (set == null) {
          return;
        }
        var template = set.getSpec().getTemplate();
        String trust = template.getMetadata().getAnnotations().get("tidelog.io/etcd-trusted-cas");
        if (trust.equals(runningTrust)) {
          return;
        }
        client.pods().inNamespace(NS).withName("dev-etcd-0").delete();
        stop();
        String self = "dev-etcd-0.dev-etcd." + NS + ".svc";
        command =
            template.getSpec().getContainers().get(0).getCommand().stream()
                .map(
                    arg ->
                        arg.replace("$(POD_NAME).dev-etcd", "dev-etcd-0.dev-etcd")
                            .replace("$(POD_NAME)", "dev-etcd-0")
                            .replace(self + ":2379", "127.0.0.1:" + clientPort)
                            .replace(self + ":2380", "127.0.0.1:" + peerPort)
                            .replace("0.0.0.0:2379", "127.0.0.1:" + clientPort)
                            .replace("0.0.0.0:2380", "127.0.0.1:" + peerPort)
                            .replace("0.0.0.0:2381", "127.0.0.1:" + metricsPort)
                            .replace("/var/lib/etcd", dir.resolve("etcd").toString())
                            .replace("/etc/tidelog-tls", tls.toString()))
                .toList();
        process =
            new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("etcd.log").toFile()))
                .start();
        URI health =
            URI.create(
                "http://127.0.0.1:"
                    + metricsPort
                    + template
                        .getSpec()
                        .getContainers()
                        .get(0)
                        .getReadinessProbe()
                        .getHttpGet()
                        .getPath());
        await()
            .atMost(Duration.ofSeconds(30))
            .ignoreExceptions()
            .until(
                () ->
                    HttpClient.newHttpClient()
                        .send(
                            HttpRequest.newBuilder(health).build(),
                            HttpResponse.BodyHandlers.ofString())
                        .body()
                        .contains("true"));
        runningTrust = trust;
        starts.incrementAndGet();
        await()
            .atMost(Duration.ofSeconds(30))
            .until(() -> client.pods().inNamespace(NS).withName("dev-etcd-0").get() == null);
        client
            .pods()
            .inNamespace(NS)
            .resource(BrokerPods.readyPod(template, "dev-etcd-0", NS))
            .create();
      } catch (Exception e) {
        throw new IllegalStateException("playing the etcd pod failed", e);
      }
    }

    void stop() throws InterruptedException {
      Process running = process;
      if (running != null) {
        running.destroy();
        if (!running.waitFor(30, TimeUnit.SECONDS)) {
          running.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        }
      }
    }
  }

  private static void createUser(KubernetesClient client, String name, String spec) {
    client.resource(Resources.user(NS, name, "dev", spec)).create();
    await()
        .atMost(Duration.ofSeconds(60))
        .until(
            () -> {
              User user = client.resources(User.class).inNamespace(NS).withName(name).get();
              return user.getStatus() != null
                  && Conditions.isTrue(user.getStatus().conditions, Conditions.READY);
            });
  }

  private static Cluster awaitListeners(KubernetesClient client) {
    return await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () -> client.resources(Cluster.class).inNamespace(NS).withName("dev").get(),
            c -> c.getStatus() != null && c.getStatus().listeners != null);
  }

  /**
   * A client of {@code user} over SASL_SSL: its Secret's {@code sasl.jaas.config}, and the CA
   * certificates of the listener's Secret as its truststore.
   */
  private static Map<String, Object> scramClient(
      KubernetesClient client, String user, String caSecret, String bootstrap) {
    Map<String, Object> config = new HashMap<>();
    config.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    config.put("security.protocol", "SASL_SSL");
    config.put("sasl.mechanism", "SCRAM-SHA-512");
    config.put("sasl.jaas.config", text(secret(client, user), "sasl.jaas.config"));
    config.put("ssl.truststore.type", "PEM");
    config.put("ssl.truststore.certificates", text(secret(client, caSecret), "ca.crt"));
    config.put("ssl.endpoint.identification.algorithm", "");
    return config;
  }

  /**
   * Writes Secret public-cert as cert-manager keeps a certificate: {@code tls.crt} (the chain) and
   * {@code tls.key}, issued by {@code ca}.
   */
  private static void writePublicCertificate(KubernetesClient client, CertificateAuthority ca) {
    CertificateAuthority.Issued issued =
        ca.issue("kafka.example.com", List.of("*.example.com"), Instant.now(), Duration.ofDays(30));
    client
        .resource(
            new io.fabric8.kubernetes.api.model.SecretBuilder()
                .withNewMetadata()
                .withName("public-cert")
                .withNamespace(NS)
                .endMetadata()
                .withType("kubernetes.io/tls")
                .withData(
                    Map.of(
                        "tls.crt",
                        base64(Pem.of(issued.certificate(), ca.certificate())),
                        "tls.key",
                        base64(Pem.of(issued.key()))))
                .build())
        .createOr(existing -> existing.update());
  }

  private static String base64(String text) {
    return Base64.getEncoder().encodeToString(text.getBytes(StandardCharsets.UTF_8));
  }

  /** Whether one record goes out with {@code config}, trusting only {@code ca}. */
  private static boolean sendsOver(Map<String, Object> config, CertificateAuthority ca)
      throws Exception {
    Map<String, Object> trusting =
        with(config, "ssl.truststore.certificates", Pem.of(ca.certificate()));
    trusting.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 15_000);
    try (KafkaProducer<String, String> producer =
        new KafkaProducer<>(trusting, new StringSerializer(), new StringSerializer())) {
      producer.send(new ProducerRecord<>("replicated", "over ext")).get(30, TimeUnit.SECONDS);
      return true;
    }
  }

  private static Map<String, Object> with(Map<String, Object> config, String key, Object value) {
    Map<String, Object> copy = new HashMap<>(config);
    copy.put(key, value);
    return copy;
  }

  private static int[] ports() {
    int[] ports = new int[BROKERS];
    for (int i = 0; i < BROKERS; i++) {
      ports[i] = LoopbackPorts.free();
    }
    return ports;
  }

  private static String loopback(int[] ports) {
    return java.util.Arrays.stream(ports)
        .mapToObj(port -> "127.0.0.1:" + port)
        .collect(java.util.stream.Collectors.joining(","));
  }

  /**
   * The operator as in Kubernetes (its certificate on the replication listener), at broker 0's
   * loopback address.
   */
  private static OperatorSettings settings(String bootstrap, int replication) {
    return new OperatorSettings(
        Set.of(Controller.CLUSTER, Controller.USER),
        null,
        "test",
        false,
        0,
        Duration.ofSeconds(5),
        Duration.ofMinutes(10),
        (cluster, client) ->
            BrokerAccess.mutualTls(cluster, client, "127.0.0.1:" + replication)
                .map(BrokerAccess::withoutHostnameVerification)
                .orElseGet(() -> BrokerAccess.plaintext(bootstrap)),
        Set.of(),
        SECRET_PROPAGATION);
  }

  private static String renewalStep(KubernetesClient client) {
    Cluster cluster = client.resources(Cluster.class).inNamespace(NS).withName("dev").get();
    return cluster.getStatus() == null
        ? null
        : Conditions.find(cluster.getStatus().conditions, "ClusterCaRenewal")
            .map(c -> c.getReason())
            .orElse(null);
  }

  /** The pod's paths moved to this test's directories. */
  private static String local(String text, Path etc, Path tls) {
    return text.replace("/etc/tidelog-tls", tls.toString()).replace("/etc/tidelog", etc.toString());
  }

  /** Runs pod {@code id}'s command; {@code ports}: plain, replication, http, mtls, scram, ext. */
  private Process broker(
      Container container, int id, Path etc, Path tls, Path podinfo, int[] ports, int etcdPort)
      throws IOException {
    String pod = "dev-broker-" + id;
    List<String> command =
        container.getCommand().stream()
            .map(
                part ->
                    local(part, etc, tls)
                        .replace("/etc/podinfo", podinfo.toString())
                        .replace(
                            "/opt/tidelog/bin/broker",
                            DevCluster.REPO.resolve("broker/docker/broker").toString()))
            .toList();
    ProcessBuilder builder =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve(pod + ".log").toFile());
    Map<String, String> env = builder.environment();
    for (EnvVar var : container.getEnv()) {
      if (var.getValue() != null) {
        env.put(var.getName(), local(var.getValue().replace("$(POD_NAME)", pod), etc, tls));
      }
    }
    assertThat(env.get("JAVA_OPTS")).isEqualTo("-Xms256m -Xmx256m");
    assertThat(env.get("TIDELOG_SSL_KEYSTORE_LOCATION"))
        .isEqualTo(tls.resolve("broker/" + pod + ".pem").toString());
    assertThat(env.get("TIDELOG_TIDELOG_ETCD_TLS_CERT_FILE"))
        .isEqualTo(tls.resolve("broker/" + pod + ".crt").toString());
    env.put("POD_NAME", pod); // the downward API
    env.put(
        "CLASSPATH",
        DevCluster.REPO.resolve("broker/target/classes")
            + ":"
            + Files.readString(DevCluster.REPO.resolve("broker/target/runtime-classpath.txt"))
                .strip());
    String listeners =
        ("REPLICATION://127.0.0.1:%d,PLAIN://127.0.0.1:%d,MTLS://127.0.0.1:%d,"
                + "SCRAM://127.0.0.1:%d,EXT://127.0.0.1:%d")
            .formatted(ports[1], ports[0], ports[3], ports[4], ports[5]);
    env.put("TIDELOG_LISTENERS", listeners);
    env.put("TIDELOG_ADVERTISED_LISTENERS", listeners);
    env.put("TIDELOG_LISTENER_NAME_REPLICATION_SSL_ENDPOINT_IDENTIFICATION_ALGORITHM", "");
    env.put("TIDELOG_TIDELOG_ETCD_ENDPOINTS", "https://127.0.0.1:" + etcdPort);
    env.put("TIDELOG_TIDELOG_ETCD_TLS_ENDPOINT_IDENTIFICATION_ALGORITHM", "");
    env.put("TIDELOG_TIDELOG_HTTP_PORT", String.valueOf(ports[2]));
    env.put("TIDELOG_LOG_DIRS", dir.resolve("data-" + id).toString());
    return builder.start();
  }

  private static void writeRack(Path podinfo, String rack) throws IOException {
    Files.writeString(
        podinfo.resolve("annotations"),
        "kubectl.kubernetes.io/default-container=\"broker\"\n"
            + ClusterModel.RACK_ANNOTATION
            + "=\""
            + rack
            + "\"\n");
  }

  /** Writes the Secret's keys as files, each replaced whole, as the kubelet updates a mount. */
  private static void mount(Secret secret, Path dir) {
    if (secret == null || secret.getData() == null) {
      return;
    }
    try {
      Files.createDirectories(dir);
      for (String key : secret.getData().keySet()) {
        byte[] content = Base64.getDecoder().decode(secret.getData().get(key));
        Path file = dir.resolve(key);
        if (Files.exists(file) && java.util.Arrays.equals(Files.readAllBytes(file), content)) {
          continue;
        }
        Path next = dir.resolve("." + key + ".next");
        Files.write(next, content);
        Files.move(next, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      }
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private static Secret secret(KubernetesClient client, String name) {
    return client.secrets().inNamespace(NS).withName(name).get();
  }

  private static String text(Secret secret, String key) {
    return new String(
        Base64.getDecoder().decode(secret.getData().get(key)), StandardCharsets.UTF_8);
  }

  /** Sends with acks=all until told to stop (at most {@value #RECORDS_MAX} records). */
  private static void produce(
      Map<String, Object> client, AtomicBoolean stop, AtomicInteger acked, List<Exception> errors) {
    Map<String, Object> config = new HashMap<>(client);
    config.put(ProducerConfig.ACKS_CONFIG, "all");
    config.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 120_000);
    try (KafkaProducer<String, String> producer =
        new KafkaProducer<>(config, new StringSerializer(), new StringSerializer())) {
      for (int i = 0; i < RECORDS_MAX && !stop.get(); i++) {
        try {
          producer.send(new ProducerRecord<>("replicated", "r" + i)).get(120, TimeUnit.SECONDS);
          acked.incrementAndGet();
          Thread.sleep(20);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        } catch (Exception e) {
          errors.add(e);
        }
      }
    }
  }

  private static int consumed(Map<String, Object> client) {
    Map<String, Object> config = new HashMap<>(client);
    config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    try (KafkaConsumer<String, String> consumer =
        new KafkaConsumer<>(config, new StringDeserializer(), new StringDeserializer())) {
      TopicPartition partition = new TopicPartition("replicated", 0);
      consumer.assign(List.of(partition));
      consumer.seekToBeginning(List.of(partition));
      long end = consumer.endOffsets(List.of(partition)).get(partition);
      int[] count = {0};
      await()
          .atMost(Duration.ofSeconds(60))
          .until(
              () -> {
                count[0] += consumer.poll(Duration.ofMillis(200)).count();
                return consumer.position(partition) >= end;
              });
      return count[0];
    }
  }

  /** The operator's Admin, as {@link BrokerAccess} makes it, at a loopback replication port. */
  private static Admin operatorAdmin(Cluster cluster, KubernetesClient client, int port) {
    return Admin.create(
        BrokerAccess.mutualTls(cluster, client, "127.0.0.1:" + port)
            .orElseThrow()
            .withoutHostnameVerification()
            .adminConfigs(
                Map.of(
                    AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 20_000,
                    AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000)));
  }

  /** An Admin client on a broker's replication listener with {@code keystorePem}'s certificate. */
  private static Admin replicationAdmin(int port, String keystorePem, String trusted) {
    Map<String, Object> config = new HashMap<>();
    config.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + port);
    config.put("security.protocol", "SSL");
    config.put("ssl.keystore.type", "PEM");
    config.put("ssl.keystore.key", Pem.of(Pem.privateKey(keystorePem)));
    config.put("ssl.keystore.certificate.chain", Pem.of(Pem.certificates(keystorePem)));
    config.put("ssl.truststore.type", "PEM");
    config.put("ssl.truststore.certificates", trusted);
    config.put("ssl.endpoint.identification.algorithm", "");
    config.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 20_000);
    config.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
    return Admin.create(config);
  }

  /** The ISR size of "replicated", as the operator's Admin (a super user) reads it. */
  private static int isr(Cluster cluster, KubernetesClient client, int port) throws Exception {
    try (Admin admin = operatorAdmin(cluster, client, port)) {
      return isr(admin);
    }
  }

  private static int isr(Admin admin) throws Exception {
    return admin
        .describeTopics(List.of("replicated"))
        .allTopicNames()
        .get(10, TimeUnit.SECONDS)
        .get("replicated")
        .partitions()
        .get(0)
        .isr()
        .size();
  }

  private static Map<Integer, Node> nodes(Admin admin) throws Exception {
    Map<Integer, Node> nodes = new HashMap<>();
    admin.describeCluster().nodes().get(10, TimeUnit.SECONDS).forEach(n -> nodes.put(n.id(), n));
    return nodes;
  }
}
