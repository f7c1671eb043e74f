package io.tidelog.operator;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

/** The operator's layers (docs/architecture.md, "Operator"), checked on the compiled classes. */
@AnalyzeClasses(
    packages = "io.tidelog.operator",
    importOptions = ImportOption.DoNotIncludeTests.class)
class ArchitectureTest {
  /** What calls out: the Kubernetes client and its DSL, Kafka's Admin. */
  private static final DescribedPredicate<JavaClass> CALLS =
      DescribedPredicate.describe(
          "a Kubernetes or Kafka client",
          c ->
              c.getName().equals("io.fabric8.kubernetes.client.KubernetesClient")
                  || c.getPackageName().startsWith("io.fabric8.kubernetes.client.dsl")
                  || c.getPackageName().startsWith("org.apache.kafka.clients.admin"));

  @ArchTest
  static final ArchRule theResourcesArePlainData =
      noClasses()
          .that()
          .resideInAPackage("io.tidelog.operator.api..")
          .should()
          .dependOnClassesThat(CALLS)
          .orShould()
          .dependOnClassesThat()
          .resideInAnyPackage(
              "io.tidelog.operator.cluster..",
              "io.tidelog.operator.topic..",
              "io.tidelog.operator.user..",
              "io.tidelog.operator.brokers..")
          .because("the custom resources are data, from which the CRDs are generated");

  @ArchTest
  static final ArchRule theModelMakesNoCalls =
      noClasses()
          .that()
          .haveFullyQualifiedName("io.tidelog.operator.cluster.ClusterModel")
          .should()
          .dependOnClassesThat(CALLS)
          .because("the desired objects are pure functions of the Cluster");

  @ArchTest
  static final ArchRule certificatesStandAlone =
      noClasses()
          .that()
          .resideInAPackage("io.tidelog.operator.certificates..")
          .should()
          .dependOnClassesThat()
          .resideInAnyPackage(
              "io.tidelog.operator.cluster..",
              "io.tidelog.operator.topic..",
              "io.tidelog.operator.user..",
              "io.tidelog.operator.brokers..",
              "io.tidelog.operator.api..")
          .because("X.509 depends on nothing else of the operator");

  @ArchTest
  static final ArchRule reconcilersHoldNoOtherReconcilersPackage =
      noClasses()
          .that()
          .resideInAnyPackage("io.tidelog.operator.topic..", "io.tidelog.operator.user..")
          .should()
          .dependOnClassesThat()
          .resideInAPackage("io.tidelog.operator.cluster..")
          .because("Topics and Users reach their Cluster's brokers through brokers, not cluster");
}
