package io.tidelog.broker.protocol;

import io.tidelog.broker.cluster.ClusterImage;
import io.tidelog.broker.cluster.MetadataStore;
import io.tidelog.broker.cluster.UserScramCredential;
import io.tidelog.broker.security.Authorization;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.AlterUserScramCredentialsRequestData;
import org.apache.kafka.common.message.AlterUserScramCredentialsRequestData.ScramCredentialDeletion;
import org.apache.kafka.common.message.AlterUserScramCredentialsRequestData.ScramCredentialUpsertion;
import org.apache.kafka.common.message.AlterUserScramCredentialsResponseData;
import org.apache.kafka.common.message.AlterUserScramCredentialsResponseData.AlterUserScramCredentialsResult;
import org.apache.kafka.common.message.DescribeUserScramCredentialsRequestData;
import org.apache.kafka.common.message.DescribeUserScramCredentialsRequestData.UserName;
import org.apache.kafka.common.message.DescribeUserScramCredentialsResponseData;
import org.apache.kafka.common.message.DescribeUserScramCredentialsResponseData.CredentialInfo;
import org.apache.kafka.common.message.DescribeUserScramCredentialsResponseData.DescribeUserScramCredentialsResult;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AlterUserScramCredentialsRequest;
import org.apache.kafka.common.requests.AlterUserScramCredentialsResponse;
import org.apache.kafka.common.requests.DescribeUserScramCredentialsRequest;
import org.apache.kafka.common.requests.DescribeUserScramCredentialsResponse;
import org.apache.kafka.common.requests.RequestContext;
import org.apache.kafka.common.security.scram.ScramCredential;
import org.apache.kafka.common.security.scram.internals.ScramFormatter;
import org.apache.kafka.common.security.scram.internals.ScramMechanism;

/**
 * AlterUserScramCredentials and DescribeUserScramCredentials, as {@code kafka-configs --entity-type
 * users --alter --add-config 'SCRAM-SHA-512=[password=...]'} and Admin's {@code
 * alterUserScramCredentials} use them. The client sends a salt and the salted password (PBKDF2 done
 * on its side); the broker derives the stored and server keys from them with Kafka's {@link
 * ScramFormatter} and stores only those, in etcd, where every broker's watch picks them up.
 *
 * <p>Each user gets one result, with Kafka's codes: a user altered twice in a request
 * DUPLICATE_RESOURCE, an empty name or an iteration count outside the mechanism's range
 * UNACCEPTABLE_CREDENTIAL, an unknown mechanism UNSUPPORTED_SASL_MECHANISM, the deletion of a
 * credential that does not exist RESOURCE_NOT_FOUND. Writes run on the metadata executor. Altering
 * needs ALTER on the cluster, describing DESCRIBE (CLUSTER_AUTHORIZATION_FAILED), as in Kafka.
 */
public final class ScramCredentialsHandler {
  private final MetadataStore metadata;
  private final Executor metadataExecutor;
  private final Authorization authorization;

  public ScramCredentialsHandler(
      MetadataStore metadata, Executor metadataExecutor, Authorization authorization) {
    this.metadata = metadata;
    this.metadataExecutor = metadataExecutor;
    this.authorization = authorization;
  }

  /** One alteration of a request: a deletion, or an upsertion with its credential. */
  private record Alteration(String user, byte mechanismType, ScramCredentialUpsertion upsertion) {}

  CompletableFuture<AlterUserScramCredentialsResponse> alter(
      RequestContext context, AbstractRequest request) {
    AlterUserScramCredentialsRequestData data = ((AlterUserScramCredentialsRequest) request).data();
    if (!authorization.allowedOnCluster(context, AclOperation.ALTER)) {
      Map<String, AlterUserScramCredentialsResult> refused = new LinkedHashMap<>();
      data.deletions()
          .forEach(
              d ->
                  refused.put(
                      d.name(), result(d.name(), Errors.CLUSTER_AUTHORIZATION_FAILED, null)));
      data.upsertions()
          .forEach(
              u ->
                  refused.put(
                      u.name(), result(u.name(), Errors.CLUSTER_AUTHORIZATION_FAILED, null)));
      return CompletableFuture.completedFuture(
          new AlterUserScramCredentialsResponse(
              new AlterUserScramCredentialsResponseData()
                  .setResults(new ArrayList<>(refused.values()))));
    }
    List<Alteration> alterations = new ArrayList<>();
    for (ScramCredentialDeletion d : data.deletions()) {
      alterations.add(new Alteration(d.name(), d.mechanism(), null));
    }
    for (ScramCredentialUpsertion u : data.upsertions()) {
      alterations.add(new Alteration(u.name(), u.mechanism(), u));
    }
    Map<String, Integer> timesNamed = new HashMap<>();
    alterations.forEach(a -> timesNamed.merge(a.user(), 1, Integer::sum));
    return CompletableFuture.supplyAsync(
        () -> {
          Map<String, AlterUserScramCredentialsResult> results = new LinkedHashMap<>();
          for (Alteration alteration : alterations) {
            String user = alteration.user();
            if (results.containsKey(user)) {
              continue;
            }
            if (timesNamed.get(user) > 1) {
              results.put(
                  user,
                  result(
                      user,
                      Errors.DUPLICATE_RESOURCE,
                      "A user credential cannot be altered twice in the same request"));
              continue;
            }
            results.put(user, apply(alteration));
          }
          return new AlterUserScramCredentialsResponse(
              new AlterUserScramCredentialsResponseData()
                  .setResults(new ArrayList<>(results.values())));
        },
        metadataExecutor);
  }

  private AlterUserScramCredentialsResult apply(Alteration alteration) {
    String user = alteration.user();
    if (user == null || user.isEmpty()) {
      return result(user, Errors.UNACCEPTABLE_CREDENTIAL, "Username must not be empty");
    }
    ScramMechanism mechanism = mechanismOf(alteration.mechanismType());
    if (mechanism == null) {
      return result(user, Errors.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism");
    }
    ScramCredentialUpsertion upsertion = alteration.upsertion();
    if (upsertion == null) {
      return metadata.deleteScramCredential(user, mechanism)
          ? result(user, Errors.NONE, null)
          : result(
              user,
              Errors.RESOURCE_NOT_FOUND,
              "Attempt to delete a user credential that does not exist");
    }
    if (upsertion.iterations() < mechanism.minIterations()) {
      return result(user, Errors.UNACCEPTABLE_CREDENTIAL, "Too few iterations");
    }
    if (upsertion.iterations() > mechanism.maxIterations()) {
      return result(user, Errors.UNACCEPTABLE_CREDENTIAL, "Too many iterations");
    }
    ScramCredential credential;
    try {
      credential =
          new ScramFormatter(mechanism)
              .generateCredential(
                  upsertion.salt(), upsertion.saltedPassword(), upsertion.iterations());
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(mechanism + " needs a hash this JVM lacks", e);
    }
    metadata.putScramCredential(new UserScramCredential(user, mechanism, credential));
    return result(user, Errors.NONE, null);
  }

  /** The internal mechanism of the wire's type byte (1: SHA-256, 2: SHA-512), or null. */
  private static ScramMechanism mechanismOf(byte type) {
    org.apache.kafka.clients.admin.ScramMechanism wire =
        org.apache.kafka.clients.admin.ScramMechanism.fromType(type);
    return wire == org.apache.kafka.clients.admin.ScramMechanism.UNKNOWN
        ? null
        : ScramMechanism.forMechanismName(wire.mechanismName());
  }

  private static AlterUserScramCredentialsResult result(String user, Errors error, String message) {
    return new AlterUserScramCredentialsResult()
        .setUser(user)
        .setErrorCode(error.code())
        .setErrorMessage(message);
  }

  CompletableFuture<DescribeUserScramCredentialsResponse> describe(
      RequestContext context, AbstractRequest request) {
    DescribeUserScramCredentialsRequestData data =
        ((DescribeUserScramCredentialsRequest) request).data();
    if (!authorization.allowedOnCluster(context, AclOperation.DESCRIBE)) {
      return CompletableFuture.completedFuture(
          new DescribeUserScramCredentialsResponse(
              new DescribeUserScramCredentialsResponseData()
                  .setErrorCode(Errors.CLUSTER_AUTHORIZATION_FAILED.code())));
    }
    ClusterImage image = metadata.image();
    Map<String, List<CredentialInfo>> byUser = new TreeMap<>();
    image
        .scramCredentials()
        .values()
        .forEach(
            c ->
                byUser
                    .computeIfAbsent(c.user(), u -> new ArrayList<>())
                    .add(
                        new CredentialInfo()
                            .setMechanism(
                                org.apache.kafka.clients.admin.ScramMechanism.fromMechanismName(
                                        c.mechanism().mechanismName())
                                    .type())
                            .setIterations(c.credential().iterations())));
    DescribeUserScramCredentialsResponseData response =
        new DescribeUserScramCredentialsResponseData().setErrorCode(Errors.NONE.code());
    if (data.users() == null || data.users().isEmpty()) {
      byUser.forEach((user, infos) -> response.results().add(described(user, infos)));
    } else {
      Map<String, Integer> timesNamed = new HashMap<>();
      data.users().forEach(u -> timesNamed.merge(u.name(), 1, Integer::sum));
      Set<String> answered = new HashSet<>();
      for (UserName wanted : data.users()) {
        String user = wanted.name();
        if (!answered.add(user)) {
          continue;
        }
        DescribeUserScramCredentialsResult result =
            new DescribeUserScramCredentialsResult().setUser(user);
        if (timesNamed.get(user) > 1) {
          result
              .setErrorCode(Errors.DUPLICATE_RESOURCE.code())
              .setErrorMessage("Cannot describe SCRAM credentials for the same user twice");
        } else if (!byUser.containsKey(user)) {
          result
              .setErrorCode(Errors.RESOURCE_NOT_FOUND.code())
              .setErrorMessage("Attempt to describe a user credential that does not exist");
        } else {
          result = described(user, byUser.get(user));
        }
        response.results().add(result);
      }
    }
    return CompletableFuture.completedFuture(new DescribeUserScramCredentialsResponse(response));
  }

  private static DescribeUserScramCredentialsResult described(
      String user, List<CredentialInfo> infos) {
    return new DescribeUserScramCredentialsResult()
        .setUser(user)
        .setErrorCode(Errors.NONE.code())
        .setCredentialInfos(infos);
  }
}
