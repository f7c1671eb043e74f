package io.tidelog.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.tidelog.operator.OperatorSettings;
import io.tidelog.operator.OperatorSettings.Controller;
import io.tidelog.operator.api.Conditions;
import io.tidelog.operator.api.User;
import io.tidelog.operator.brokers.BrokerAccess;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AccessControlEntryFilter;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.errors.ResourceNotFoundException;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.quota.ClientQuotaFilter;
import org.apache.kafka.common.quota.ClientQuotaFilterComponent;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourcePatternFilter;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The User reconciler against a secure dev cluster (SASL_SSL, SCRAM-SHA-512, ACLs on): a User's
 * Secret is all a kafka-clients producer and consumer need; its ACLs and quotas are the cluster's,
 * exactly; a User without ACLs is refused a topic; a shrunk ACL list removes the ACL; a changed
 * password Secret changes the credential; a Kafka user that exists is taken over only when
 * annotated; deleting the User removes its credential, ACLs and quotas.
 */
class UserOperatorIT {
  private static final String NS = "kafka";
  private static final Duration WITHIN = Duration.ofSeconds(60);

  @TempDir Path dir;

  @Test
  void aUsersSecretServesItsClientsAndItsAclsQuotasAndCredentialFollowTheResource()
      throws Exception {
    try (DevCluster cluster = new DevCluster(dir, 1)) {
      String bootstrap = upSecure(cluster);
      Map<String, Object> adminSecurity = adminSecurity();
      try (Admin admin = Admin.create(withBootstrap(adminSecurity, bootstrap));
          MockKubernetes kubernetes =
              new MockKubernetes(settings(new BrokerAccess(bootstrap, adminSecurity)))) {
        KubernetesClient client = kubernetes.client;
        admin.createTopics(List.of(new NewTopic("orders", 1, (short) 1))).all().get();
        kubernetes.cluster(NS, "dev", bootstrap);

        // Given a User with ACLs on a topic and a group prefix, and a quota,
        create(
            client,
            "alice",
            """
            authentication: {type: scram-sha-512}
            authorization:
              type: simple
              acls:
                - resource: {type: topic, name: orders}
                  operations: [Read, Write, Describe]
                - resource: {type: group, name: g-, patternType: prefix}
                  operations: [Read]
            quotas: {producerByteRate: 1048576}
            """);
        awaitReady(client, "alice", "Reconciled");

        // then its Secret is all a producer and a consumer need,
        Map<String, Object> alice = clientConfig(client, "alice", bootstrap);
        produce(alice, "from alice");
        assertThat(consume(alice, "g-alice")).contains("from alice");
        // and the cluster holds its ACLs and quota exactly.
        assertThat(acls(admin, "User:alice")).hasSize(4);
        assertThat(quotas(admin, "alice")).containsEntry("producer_byte_rate", 1048576.0);

        // A User without ACLs authenticates but may not write the topic.
        create(client, "bob", "authentication: {type: scram-sha-512}\n");
        awaitReady(client, "bob", "Reconciled");
        ExecutionException bobRefused =
            assertThrows(
                ExecutionException.class,
                () -> produce(clientConfig(client, "bob", bootstrap), "from bob"));
        assertThat(bobRefused.getCause()).isInstanceOf(TopicAuthorizationException.class);

        // When alice's ACLs shrink to reading and her quota goes, the cluster follows.
        Resources.edit(
            client.resources(User.class).inNamespace(NS).withName("alice"),
            u -> {
              u.getSpec().authorization.acls = List.of(u.getSpec().authorization.acls.get(0));
              u.getSpec().authorization.acls.get(0).operations = List.of("Read", "Describe");
              u.getSpec().quotas = null;
              return u;
            });
        await().atMost(WITHIN).until(() -> acls(admin, "User:alice").size() == 2);
        await().atMost(WITHIN).until(() -> quotas(admin, "alice").isEmpty());
        ExecutionException writeGone =
            assertThrows(ExecutionException.class, () -> produce(alice, "again"));
        // she may still describe the topic, so the refusal is of her idempotent producer's id:
        // neither IDEMPOTENT_WRITE nor WRITE on any topic (KIP-679), as in Kafka
        assertThat(writeGone.getCause()).isInstanceOf(ClusterAuthorizationException.class);

        // When the password in alice's Secret changes, so does her credential.
        String oldJaas = (String) alice.get("sasl.jaas.config");
        Resources.edit(
            client.secrets().inNamespace(NS).withName("alice"),
            s -> {
              s.getData().put("password", base64("a-new-password-of-alice"));
              return s;
            });
        Resources.edit(
            client.resources(User.class).inNamespace(NS).withName("alice"),
            u -> {
              u.getMetadata().getAnnotations().put("test/nudge", "1"); // reconcile now, not in 60 s
              return u;
            });
        await()
            .atMost(WITHIN)
            .until(
                () ->
                    !clientConfig(client, "alice", bootstrap)
                        .get("sasl.jaas.config")
                        .equals(oldJaas));
        // (she may still describe the topic: her new password logs in, the old one no longer)
        Map<String, Object> renewed = clientConfig(client, "alice", bootstrap);
        await().atMost(WITHIN).ignoreExceptions().until(() -> describes(renewed));
        ExecutionException stale = assertThrows(ExecutionException.class, () -> describes(alice));
        assertThat(stale.getCause()).isInstanceOf(SaslAuthenticationException.class);

        // A Kafka user with a credential already is taken over only when annotated.
        admin
            .alterUserScramCredentials(
                List.of(
                    new UserScramCredentialUpsertion(
                        "carol",
                        new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096),
                        "carols-own")))
            .all()
            .get();
        create(client, "carol", "authentication: {type: scram-sha-512}\n");
        awaitReady(client, "carol", "UserExists");
        Resources.edit(
            client.resources(User.class).inNamespace(NS).withName("carol"),
            u -> {
              u.getMetadata().getAnnotations().put(User.ADOPT_ANNOTATION, "true");
              return u;
            });
        awaitReady(client, "carol", "Reconciled");

        // Deleting alice removes her credential, ACLs and quotas, and then the resource goes.
        client.resources(User.class).inNamespace(NS).withName("alice").delete();
        await()
            .atMost(WITHIN)
            .until(
                () -> client.resources(User.class).inNamespace(NS).withName("alice").get() == null);
        assertThat(acls(admin, "User:alice")).isEmpty();
        ExecutionException noCredential =
            assertThrows(
                ExecutionException.class,
                () ->
                    admin
                        .describeUserScramCredentials(List.of("alice"))
                        .description("alice")
                        .get());
        assertThat(noCredential.getCause()).isInstanceOf(ResourceNotFoundException.class);
      }
    }
  }

  /**
   * A User whose credential the operator set but whose quota the broker then refused (the
   * operator's principal here may alter ACLs and credentials, not client quotas) keeps the
   * credential as the operator's: once the quota may be set, the next reconcile finishes it, rather
   * than refusing it as a Kafka user that someone else made.
   */
  @Test
  void aCredentialTheOperatorSetStaysItsOwnWhenTheQuotasThenFail() throws Exception {
    try (DevCluster cluster = new DevCluster(dir, 1)) {
      String bootstrap = upSecure(cluster);
      Map<String, Object> adminSecurity = adminSecurity();
      try (Admin admin = Admin.create(withBootstrap(adminSecurity, bootstrap))) {
        // Given an operator whose principal may do all on the cluster but alter its configs,
        admin
            .alterUserScramCredentials(
                List.of(
                    new UserScramCredentialUpsertion(
                        "limited-operator",
                        new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096),
                        "limited-operator-secret")))
            .all()
            .get();
        ResourcePattern clusterResource =
            new ResourcePattern(ResourceType.CLUSTER, "kafka-cluster", PatternType.LITERAL);
        AclBinding denyAlterConfigs =
            new AclBinding(
                clusterResource,
                new AccessControlEntry(
                    "User:limited-operator",
                    "*",
                    AclOperation.ALTER_CONFIGS,
                    AclPermissionType.DENY));
        admin
            .createAcls(
                List.of(
                    new AclBinding(
                        clusterResource,
                        new AccessControlEntry(
                            "User:limited-operator",
                            "*",
                            AclOperation.ALL,
                            AclPermissionType.ALLOW)),
                    denyAlterConfigs))
            .all()
            .get();
        Map<String, Object> limited = new HashMap<>(adminSecurity);
        limited.put("sasl.mechanism", "SCRAM-SHA-512");
        limited.put(
            "sasl.jaas.config",
            "org.apache.kafka.common.security.scram.ScramLoginModule required"
                + " username=\"limited-operator\" password=\"limited-operator-secret\";");
        try (MockKubernetes kubernetes =
            new MockKubernetes(settings(new BrokerAccess(bootstrap, limited)))) {
          KubernetesClient client = kubernetes.client;
          kubernetes.cluster(NS, "dev", bootstrap);

          // when a User with a quota is made, its credential is set and its quota refused,
          create(
              client,
              "erin",
              """
              authentication: {type: scram-sha-512}
              quotas: {producerByteRate: 1048576}
              """);
          awaitReady(client, "erin", "ClusterUnreachable");
          assertThat(
                  admin
                      .describeUserScramCredentials(List.of("erin"))
                      .description("erin")
                      .get()
                      .credentialInfos())
              .isNotEmpty();
          assertThat(client.resources(User.class).inNamespace(NS).withName("erin").get())
              .satisfies(u -> assertThat(u.getStatus().credentialSource).isNotNull());

          // then, once the quota may be set, the User is finished, not taken for another's.
          admin.deleteAcls(List.of(denyAlterConfigs.toFilter())).all().get();
          Resources.edit(
              client.resources(User.class).inNamespace(NS).withName("erin"),
              u -> {
                u.getMetadata().getAnnotations().put("test/nudge", "1");
                return u;
              });
          awaitReady(client, "erin", "Reconciled");
          assertThat(quotas(admin, "erin")).containsEntry("producer_byte_rate", 1048576.0);
        }
      }
    }
  }

  /** Starts the dev cluster of one broker with SASL_SSL and ACLs; returns its bootstrap. */
  private static String upSecure(DevCluster cluster) throws Exception {
    DevCluster.Result up =
        cluster.run("up", "--secure", "--brokers", "1", "--port", String.valueOf(cluster.port));
    assertThat(up.exitCode()).as(up.errors()).isZero();
    return up.output().strip().lines().findFirst().orElseThrow();
  }

  /** The secure dev cluster's admin client security configs, from its client.properties. */
  private Map<String, Object> adminSecurity() throws Exception {
    Map<String, Object> security = new HashMap<>();
    Properties properties = new Properties();
    try (Reader reader = Files.newBufferedReader(dir.resolve("client.properties"))) {
      properties.load(reader);
    }
    properties.forEach((k, v) -> security.put((String) k, v));
    return security;
  }

  private static OperatorSettings settings(BrokerAccess access) {
    return new OperatorSettings(
        Set.of(Controller.USER),
        null,
        "test",
        false,
        0,
        Duration.ofSeconds(30),
        Duration.ofMinutes(10),
        (cluster, client) -> access,
        Set.of(),
        Duration.ofSeconds(3));
  }

  private static void create(KubernetesClient client, String name, String spec) {
    client.resource(Resources.user(NS, name, "dev", spec)).create();
  }

  private static void awaitReady(KubernetesClient client, String name, String reason) {
    await()
        .atMost(WITHIN)
        .until(
            () -> client.resources(User.class).inNamespace(NS).withName(name).get(),
            u ->
                u.getStatus() != null
                    && Conditions.find(u.getStatus().conditions, Conditions.READY)
                        .map(c -> reason.equals(c.getReason()))
                        .orElse(false));
  }

  /** A client's configs from the User's Secret alone, and the dev cluster's CA. */
  private Map<String, Object> clientConfig(KubernetesClient client, String user, String bootstrap) {
    Secret secret = client.secrets().inNamespace(NS).withName(user).get();
    Map<String, Object> config = new HashMap<>();
    config.put("bootstrap.servers", bootstrap);
    config.put("security.protocol", "SASL_SSL");
    config.put("sasl.mechanism", "SCRAM-SHA-512");
    config.put(
        "sasl.jaas.config",
        new String(
            Base64.getDecoder().decode(secret.getData().get("sasl.jaas.config")),
            StandardCharsets.UTF_8));
    config.put("ssl.truststore.type", "PEM");
    config.put("ssl.truststore.location", dir.resolve("tls/ca.pem").toString());
    return config;
  }

  private static Map<String, Object> withBootstrap(Map<String, Object> security, String bootstrap) {
    Map<String, Object> config = new HashMap<>(security);
    config.put("bootstrap.servers", bootstrap);
    return config;
  }

  private static void produce(Map<String, Object> config, String value) throws Exception {
    Map<String, Object> producer = new HashMap<>(config);
    producer.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 20_000);
    producer.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 20_000);
    producer.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
    try (KafkaProducer<String, String> p =
        new KafkaProducer<>(producer, new StringSerializer(), new StringSerializer())) {
      p.send(new ProducerRecord<>("orders", value)).get(30, TimeUnit.SECONDS);
    }
  }

  private static List<String> consume(Map<String, Object> config, String group) {
    Map<String, Object> consumer = new HashMap<>(config);
    consumer.put(ConsumerConfig.GROUP_ID_CONFIG, group);
    consumer.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    List<String> values = new ArrayList<>();
    try (KafkaConsumer<String, String> c =
        new KafkaConsumer<>(consumer, new StringDeserializer(), new StringDeserializer())) {
      c.subscribe(List.of("orders"));
      await()
          .atMost(WITHIN)
          .until(
              () -> {
                c.poll(Duration.ofMillis(200)).forEach(r -> values.add(r.value()));
                return !values.isEmpty();
              });
    }
    return values;
  }

  /** Whether a client of {@code config} may describe the topic; throws when refused. */
  private static boolean describes(Map<String, Object> config) throws Exception {
    Map<String, Object> adminConfig = new HashMap<>(config);
    adminConfig.put("default.api.timeout.ms", 20_000);
    adminConfig.put("request.timeout.ms", 10_000);
    try (Admin admin = Admin.create(adminConfig)) {
      return admin
          .describeTopics(List.of("orders"))
          .allTopicNames()
          .get(30, TimeUnit.SECONDS)
          .containsKey("orders");
    }
  }

  private static List<AclBinding> acls(Admin admin, String principal) throws Exception {
    return new ArrayList<>(
        admin
            .describeAcls(
                new AclBindingFilter(
                    ResourcePatternFilter.ANY,
                    new AccessControlEntryFilter(
                        principal, null, AclOperation.ANY, AclPermissionType.ANY)))
            .values()
            .get(30, TimeUnit.SECONDS));
  }

  private static Map<String, Double> quotas(Admin admin, String user) throws Exception {
    return admin
        .describeClientQuotas(
            ClientQuotaFilter.containsOnly(
                List.of(ClientQuotaFilterComponent.ofEntity(ClientQuotaEntity.USER, user))))
        .entities()
        .get(30, TimeUnit.SECONDS)
        .getOrDefault(new ClientQuotaEntity(Map.of(ClientQuotaEntity.USER, user)), Map.of());
  }

  private static String base64(String text) {
    return Base64.getEncoder().encodeToString(text.getBytes(StandardCharsets.UTF_8));
  }
}
