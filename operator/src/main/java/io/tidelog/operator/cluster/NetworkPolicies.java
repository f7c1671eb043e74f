package io.tidelog.operator.cluster;

import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyIngressRule;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyIngressRuleBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPeer;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPeerBuilder;
import io.tidelog.operator.api.Cluster;
import io.tidelog.operator.api.ClusterSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The NetworkPolicies of a Cluster: what may reach its pods, and on which port. Brokers: the
 * replication listener only from brokers and the operator, each client listener from its {@code
 * networkPolicyPeers} (anyone when it names none, as Strimzi does), the HTTP port (probes, {@code
 * /metrics}) from anyone. A managed etcd: clients (2379) only from the brokers, peers (2380) only
 * from its members.
 */
final class NetworkPolicies {
  /** The label the operator's pods carry (the chart's name). */
  static final String OPERATOR_POD_LABEL = "app.kubernetes.io/name";

  static final String OPERATOR_POD_VALUE = "tidelog-operator";

  private NetworkPolicies() {}

  /**
   * @param operatorNamespace the namespace the operator runs in, or null when not known: then its
   *     pods are let in from any namespace
   */
  static NetworkPolicy brokers(Cluster c, String operatorNamespace) {
    List<NetworkPolicyIngressRule> rules = new ArrayList<>();
    rules.add(
        rule(
            BrokerListeners.REPLICATION_PORT,
            List.of(pods(ClusterModel.labels(c, "broker")), operator(operatorNamespace))));
    for (ClusterSpec.Listener listener : BrokerListeners.clientListeners(c)) {
      rules.add(
          rule(
              listener.port,
              listener.networkPolicyPeers == null ? List.of() : listener.networkPolicyPeers));
    }
    rules.add(rule(ClusterModel.HTTP_PORT, List.of()));
    return policy(c, ClusterModel.brokerSet(c), "broker", rules);
  }

  static NetworkPolicy etcd(Cluster c) {
    return policy(
        c,
        ClusterModel.etcdSet(c),
        "etcd",
        List.of(
            rule(ClusterModel.ETCD_CLIENT_PORT, List.of(pods(ClusterModel.labels(c, "broker")))),
            rule(ClusterModel.ETCD_PEER_PORT, List.of(pods(ClusterModel.labels(c, "etcd"))))));
  }

  private static NetworkPolicy policy(
      Cluster c, String name, String component, List<NetworkPolicyIngressRule> rules) {
    return new NetworkPolicyBuilder()
        .withMetadata(ClusterModel.meta(c, name, component))
        .withNewSpec()
        .withPodSelector(
            new LabelSelectorBuilder().withMatchLabels(ClusterModel.labels(c, component)).build())
        .withPolicyTypes("Ingress")
        .withIngress(rules)
        .endSpec()
        .build();
  }

  /** Ingress on {@code port} from {@code from}; from anyone when it is empty. */
  private static NetworkPolicyIngressRule rule(int port, List<NetworkPolicyPeer> from) {
    return new NetworkPolicyIngressRuleBuilder()
        .addNewPort()
        .withPort(new IntOrString(port))
        .withProtocol("TCP")
        .endPort()
        .withFrom(from)
        .build();
  }

  private static NetworkPolicyPeer pods(Map<String, String> labels) {
    return new NetworkPolicyPeerBuilder()
        .withPodSelector(new LabelSelectorBuilder().withMatchLabels(labels).build())
        .build();
  }

  private static NetworkPolicyPeer operator(String namespace) {
    LabelSelector namespaces =
        namespace == null
            ? new LabelSelector()
            : new LabelSelectorBuilder()
                .withMatchLabels(Map.of("kubernetes.io/metadata.name", namespace))
                .build();
    return new NetworkPolicyPeerBuilder()
        .withNamespaceSelector(namespaces)
        .withPodSelector(
            new LabelSelectorBuilder()
                .withMatchLabels(Map.of(OPERATOR_POD_LABEL, OPERATOR_POD_VALUE))
                .build())
        .build();
  }
}
