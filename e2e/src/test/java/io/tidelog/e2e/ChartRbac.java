package io.tidelog.e2e;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Decides, as the API server's RBAC authorizer would, whether the chart's ClusterRole and Role
 * allow an API request, so that the operator's requests in the mock API server's tests check the
 * chart's least-privilege rules against what the operator really does.
 */
final class ChartRbac {
  /** An API request as the server saw it. */
  record Request(String method, String path) {
    @Override
    public String toString() {
      return method + " " + path;
    }
  }

  private final List<PolicyRule> clusterRules;
  private final Map<String, List<PolicyRule>> roleRules;

  private ChartRbac(List<PolicyRule> clusterRules, Map<String, List<PolicyRule>> roleRules) {
    this.clusterRules = clusterRules;
    this.roleRules = roleRules;
  }

  /** The rules of the chart rendered with its defaults. */
  static ChartRbac ofChart() {
    return ofChart(Map.of());
  }

  /**
   * The rules of the chart rendered with {@code values}: those of every ClusterRole, and of every
   * Role in its namespace (the chart binds each to the operator's account).
   */
  static ChartRbac ofChart(Map<String, Object> values) {
    List<HasMetadata> chart = HelmChart.render(values);
    List<PolicyRule> cluster =
        HelmChart.all(chart, ClusterRole.class).stream()
            .flatMap(r -> r.getRules().stream())
            .toList();
    Map<String, List<PolicyRule>> roles = new HashMap<>();
    for (Role role : HelmChart.all(chart, Role.class)) {
      roles
          .computeIfAbsent(role.getMetadata().getNamespace(), ns -> new ArrayList<>())
          .addAll(role.getRules());
    }
    return new ChartRbac(cluster, roles);
  }

  boolean allows(Request request) {
    String[] pathAndQuery = request.path().split("\\?", 2);
    String query = pathAndQuery.length > 1 ? pathAndQuery[1] : "";
    List<String> segments =
        Arrays.stream(pathAndQuery[0].split("/")).filter(s -> !s.isEmpty()).toList();
    int resourceStart;
    String group;
    if (segments.size() >= 3 && segments.get(0).equals("api")) {
      group = "";
      resourceStart = 2;
    } else if (segments.size() >= 4 && segments.get(0).equals("apis")) {
      group = segments.get(1);
      resourceStart = 3;
    } else {
      return true; // discovery (/api, /apis, /version): every authenticated user may
    }
    List<String> rest = segments.subList(resourceStart, segments.size());
    String namespace = null;
    if (rest.size() >= 3 && rest.get(0).equals("namespaces")) {
      namespace = rest.get(1);
      rest = rest.subList(2, rest.size());
    }
    String resource = rest.size() > 2 ? rest.get(0) + "/" + rest.get(2) : rest.get(0);
    boolean named = rest.size() > 1;
    if (group.equals("authorization.k8s.io") && resource.startsWith("selfsubject")) {
      return true; // granted to every authenticated user (system:basic-user)
    }
    String verb =
        switch (request.method()) {
          case "GET" -> named ? "get" : query.contains("watch=true") ? "watch" : "list";
          case "POST" -> "create";
          case "PUT" -> "update";
          case "PATCH" -> "patch";
          case "DELETE" -> named ? "delete" : "deletecollection";
          default -> request.method();
        };
    return matches(clusterRules, group, resource, verb)
        || (namespace != null
            && matches(roleRules.getOrDefault(namespace, List.of()), group, resource, verb));
  }

  private static boolean matches(
      List<PolicyRule> rules, String group, String resource, String verb) {
    return rules.stream()
        .anyMatch(
            r ->
                r.getApiGroups().contains(group)
                    && r.getResources().contains(resource)
                    && r.getVerbs().contains(verb));
  }
}
