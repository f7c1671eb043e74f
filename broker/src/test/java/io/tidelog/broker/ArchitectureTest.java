package io.tidelog.broker;

import static com.tngtech.archunit.core.domain.JavaClass.Predicates.belongToAnyOf;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideOutsideOfPackages;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;
import io.tidelog.broker.log.LogManager;
import io.tidelog.broker.log.PartitionLog;

/** The dependency directions of docs/architecture.md, checked on the compiled classes. */
@AnalyzeClasses(
    packages = "io.tidelog.broker",
    importOptions = ImportOption.DoNotIncludeTests.class)
class ArchitectureTest {

  @ArchTest
  static final ArchRule logIsPlainJava =
      noClasses()
          .that()
          .resideInAPackage("io.tidelog.broker.log..")
          .should()
          .dependOnClassesThat()
          .resideInAPackage("io.vertx..")
          .because("the storage engine is plain Java; the broker owns threads and contexts");

  @ArchTest
  static final ArchRule logDependsOnNoOtherBrokerPackage =
      noClasses()
          .that()
          .resideInAPackage("io.tidelog.broker.log..")
          .should()
          .dependOnClassesThat()
          .resideInAnyPackage(
              "io.tidelog.broker.network..",
              "io.tidelog.broker.protocol..",
              "io.tidelog.broker.replica..",
              "io.tidelog.broker.cluster..",
              "io.tidelog.broker.group..",
              "io.tidelog.broker.txn..",
              "io.tidelog.broker.metrics..")
          .because("the log is the bottom layer");

  @ArchTest
  static final ArchRule logDoesNotKnowKafkaErrorCodes =
      noClasses()
          .that()
          .resideOutsideOfPackages(
              "io.tidelog.broker.protocol..",
              "io.tidelog.broker.group..",
              "io.tidelog.broker.txn..")
          .and()
          .haveNameNotMatching("io\\.tidelog\\.broker\\.replica\\.ReplicaFetcher(\\$.*)?")
          .should()
          .dependOnClassesThat()
          .haveFullyQualifiedName("org.apache.kafka.common.protocol.Errors")
          .because(
              "protocol is the only place that maps exceptions to Kafka error codes; the group"
                  + " and transaction coordinators answer in them, as their protocols define"
                  + " their outcomes by error code, and the transaction coordinator reads other"
                  + " brokers' answers; the replica fetcher, a client of another broker, only"
                  + " reads them");

  @ArchTest
  static final ArchRule eventLoopCodeReachesLogsOnlyThroughTheShards =
      noClasses()
          .that()
          .resideInAnyPackage("io.tidelog.broker.network..", "io.tidelog.broker.protocol..")
          .should()
          .dependOnClassesThat(belongToAnyOf(PartitionLog.class, LogManager.class))
          .orShould()
          .dependOnClassesThat()
          .resideInAPackage("java.nio.file..")
          .because(
              "network and protocol run on event loops: partition logs are touched only on their"
                  + " storage shard (ReplicaManager), and files not at all");

  @ArchTest
  static final ArchRule eventLoopCodeNeverSleeps =
      noClasses()
          .that()
          .resideInAnyPackage("io.tidelog.broker.network..", "io.tidelog.broker.protocol..")
          .should()
          .callMethod(Thread.class, "sleep", long.class)
          .because("an event loop must never block");

  /**
   * A rule that {@code pkg} uses no Tidelog package but itself and {@code allowed}: the broker's
   * packages in layers, as docs/architecture.md draws them, with nothing below using what is above.
   */
  private static ArchRule layer(String pkg, String... allowed) {
    String[] own = new String[allowed.length + 1];
    own[0] = "io.tidelog.broker." + pkg + "..";
    for (int i = 0; i < allowed.length; i++) {
      own[i + 1] = "io.tidelog.broker." + allowed[i] + "..";
    }
    return noClasses()
        .that()
        .resideInAPackage("io.tidelog.broker." + pkg + "..")
        .should()
        .dependOnClassesThat(
            resideInAPackage("io.tidelog.broker..").and(resideOutsideOfPackages(own)))
        .because("docs/architecture.md: " + pkg + " may use " + String.join(", ", allowed));
  }

  @ArchTest static final ArchRule configLayer = layer("config", "log");

  @ArchTest static final ArchRule clusterLayer = layer("cluster", "config", "log");

  @ArchTest static final ArchRule securityLayer = layer("security", "config", "cluster");

  @ArchTest static final ArchRule quotaLayer = layer("quota");

  @ArchTest static final ArchRule networkLayer = layer("network", "config", "security");

  @ArchTest
  static final ArchRule replicaLayer =
      layer("replica", "log", "config", "cluster", "network", "quota");

  @ArchTest
  static final ArchRule groupLayer = layer("group", "log", "config", "cluster", "replica");

  @ArchTest
  static final ArchRule txnLayer = layer("txn", "log", "config", "cluster", "network", "replica");

  @ArchTest
  static final ArchRule metricsLayer =
      layer("metrics", "log", "cluster", "replica", "group", "txn");

  @ArchTest
  static final ArchRule protocolLayer =
      layer(
          "protocol",
          "log",
          "config",
          "cluster",
          "security",
          "quota",
          "network",
          "replica",
          "group",
          "txn");

  @ArchTest
  static final ArchRule onlyClusterTalksToEtcd =
      noClasses()
          .that()
          .resideOutsideOfPackage("io.tidelog.broker.cluster..")
          .should()
          .dependOnClassesThat()
          .resideInAPackage("io.etcd.jetcd..")
          .because("cluster is the only place that talks to etcd");

  @ArchTest
  static final ArchRule handlersHoldNoOtherHandler =
      noClasses()
          .that()
          .resideInAPackage("io.tidelog.broker.protocol..")
          .and()
          .haveSimpleNameEndingWith("Handler")
          .should()
          .dependOnClassesThat(
              com.tngtech.archunit.base.DescribedPredicate.describe(
                  "another handler",
                  (com.tngtech.archunit.core.domain.JavaClass c) ->
                      c.getPackageName().equals("io.tidelog.broker.protocol")
                          && c.getSimpleName().endsWith("Handler")))
          .because(
              "what two APIs share (topic creation, say) has one owner below protocol, which each"
                  + " handler calls");

  @ArchTest
  static final ArchRule aReplicaFetcherSeesItsPartitionsThroughOneInterface =
      noClasses()
          .that()
          .haveFullyQualifiedName("io.tidelog.broker.replica.ReplicaFetcher")
          .should()
          .dependOnClassesThat()
          .haveFullyQualifiedName("io.tidelog.broker.replica.ReplicaManager")
          .orShould()
          .dependOnClassesThat()
          .haveFullyQualifiedName("io.tidelog.broker.replica.ReplicaFetchers")
          .orShould()
          .dependOnClassesThat()
          .resideInAnyPackage("io.tidelog.broker.cluster..", "io.tidelog.broker.network..")
          .because(
              "a fetcher reaches its leader through LeaderEndpoint and its partitions through"
                  + " FollowedPartitions, as Kafka's fetcher thread and RemoteLeaderEndPoint");
}
