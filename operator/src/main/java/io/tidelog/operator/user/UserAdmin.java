package io.tidelog.operator.user;

import io.tidelog.operator.brokers.BrokerAccess;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialAlteration;
import org.apache.kafka.clients.admin.UserScramCredentialDeletion;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.common.acl.AccessControlEntryFilter;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.errors.ResourceNotFoundException;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.quota.ClientQuotaFilter;
import org.apache.kafka.common.quota.ClientQuotaFilterComponent;
import org.apache.kafka.common.resource.ResourcePatternFilter;

/**
 * A Kafka user of one cluster through Kafka's Admin: its SCRAM-SHA-512 credential, the ACLs of its
 * principal, its user quotas. One per reconcile; closed after it.
 */
final class UserAdmin implements AutoCloseable {
  /** Kafka's default for a SCRAM credential's iterations (kafka-configs uses it too). */
  static final int SCRAM_ITERATIONS = 4096;

  private static final Duration TIMEOUT = Duration.ofSeconds(30);

  private final Admin admin;

  UserAdmin(BrokerAccess access) {
    admin = access.newAdmin(Duration.ofSeconds(10), TIMEOUT);
  }

  boolean hasCredential(String user) throws Exception {
    try {
      return !admin
          .describeUserScramCredentials(List.of(user))
          .description(user)
          .get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
          .credentialInfos()
          .isEmpty();
    } catch (ExecutionException e) {
      if (e.getCause() instanceof ResourceNotFoundException) {
        return false;
      }
      throw e;
    }
  }

  void setPassword(String user, String password) throws Exception {
    alter(
        new UserScramCredentialUpsertion(
            user,
            new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, SCRAM_ITERATIONS),
            password));
  }

  void deleteCredential(String user) throws Exception {
    if (hasCredential(user)) {
      alter(new UserScramCredentialDeletion(user, ScramMechanism.SCRAM_SHA_512));
    }
  }

  private void alter(UserScramCredentialAlteration alteration) throws Exception {
    admin
        .alterUserScramCredentials(List.of(alteration))
        .all()
        .get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** The ACLs whose principal is {@code principal}. */
  Set<AclBinding> acls(String principal) throws Exception {
    return new HashSet<>(
        admin
            .describeAcls(
                new AclBindingFilter(
                    ResourcePatternFilter.ANY,
                    new AccessControlEntryFilter(
                        principal, null, AclOperation.ANY, AclPermissionType.ANY)))
            .values()
            .get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS));
  }

  /** Makes {@code principal}'s ACLs exactly {@code wanted}. */
  void setAcls(String principal, Set<AclBinding> wanted) throws Exception {
    Set<AclBinding> current = acls(principal);
    List<AclBinding> missing = wanted.stream().filter(a -> !current.contains(a)).toList();
    List<AclBindingFilter> extra =
        current.stream().filter(a -> !wanted.contains(a)).map(AclBinding::toFilter).toList();
    if (!missing.isEmpty()) {
      admin.createAcls(missing).all().get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    }
    if (!extra.isEmpty()) {
      admin.deleteAcls(extra).all().get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    }
  }

  /** Makes {@code user}'s quotas exactly {@code wanted}: a quota not in it is removed. */
  void setQuotas(String user, Map<String, Double> wanted) throws Exception {
    ClientQuotaEntity entity = new ClientQuotaEntity(Map.of(ClientQuotaEntity.USER, user));
    Map<String, Double> current =
        admin
            .describeClientQuotas(
                ClientQuotaFilter.containsOnly(
                    List.of(ClientQuotaFilterComponent.ofEntity(ClientQuotaEntity.USER, user))))
            .entities()
            .get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
            .getOrDefault(entity, Map.of());
    List<ClientQuotaAlteration.Op> ops = new ArrayList<>();
    Map<String, Double> removed = new HashMap<>(current);
    wanted.forEach(
        (key, value) -> {
          removed.remove(key);
          if (!value.equals(current.get(key))) {
            ops.add(new ClientQuotaAlteration.Op(key, value));
          }
        });
    removed.keySet().forEach(key -> ops.add(new ClientQuotaAlteration.Op(key, null)));
    if (!ops.isEmpty()) {
      admin
          .alterClientQuotas(List.of(new ClientQuotaAlteration(entity, ops)))
          .all()
          .get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    }
  }

  @Override
  public void close() {
    admin.close(Duration.ofSeconds(5));
  }
}
