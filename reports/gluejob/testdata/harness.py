# Runs the generated Glue driver outside Glue: awsglue, pyspark and boto3
# are replaced by stand-ins that list the objects of listing.json (in two
# pages), run each partition as one task with its own attempt id and
# record the uploads; lima-tui is the fake in fake_lima.py. Used by
# TestGlueDriverRuns.
import json, os, runpy, sys, types

work = os.environ["WORK"]
files, uploads = {}, []

utils = types.ModuleType("awsglue.utils")
utils.getResolvedOptions = lambda argv, names: {n: argv[argv.index("--" + n) + 1] for n in names}
sys.modules["awsglue"], sys.modules["awsglue.utils"] = types.ModuleType("awsglue"), utils


class SparkFiles:
    get = staticmethod(lambda name: files[name])


class Task:
    n = 0

    def __init__(self):
        Task.n += 1
        self.n = Task.n

    def taskAttemptId(self):
        return 100 + self.n

    def attemptNumber(self):
        return 0


class TaskContext:
    current = None
    get = staticmethod(lambda: TaskContext.current)


class RDD:
    def __init__(self, data, n):
        self.data, self.n = data, n

    def mapPartitions(self, f):
        out = []
        for i in range(self.n):
            TaskContext.current = Task()
            out.extend(f(iter(self.data[i * len(self.data) // self.n:(i + 1) * len(self.data) // self.n])))
        return RDD(out, 1)

    def collect(self):
        return self.data


class Context:
    def addFile(self, uri):
        files[uri.rsplit("/", 1)[1]] = os.path.join(work, "added", uri.rsplit("/", 1)[1])

    def parallelize(self, data, n):
        return RDD(list(data), n)


class Builder:
    def getOrCreate(self):
        return types.SimpleNamespace(sparkContext=Context())


pyspark, sql = types.ModuleType("pyspark"), types.ModuleType("pyspark.sql")
pyspark.SparkFiles, pyspark.TaskContext = SparkFiles, TaskContext
sql.SparkSession = types.SimpleNamespace(builder=Builder())
sys.modules["pyspark"], sys.modules["pyspark.sql"] = pyspark, sql

listing = json.load(open(os.path.join(work, "listing.json")))


class Paginator:
    def paginate(self, Bucket, Prefix):
        objs = [o for o in listing if o["Bucket"] == Bucket and o["Key"].startswith(Prefix)]
        return [{"Contents": objs[:2]}, {"Contents": objs[2:]}, {}]


class Client:
    def get_paginator(self, name):
        return Paginator()

    def upload_file(self, path, bucket, key):
        uploads.append({"Bucket": bucket, "Key": key, "Body": open(path).read()})


boto3 = types.ModuleType("boto3")
boto3.client = lambda name: Client()
sys.modules["boto3"] = boto3

sys.argv = ["driver.py", "--JOB_ID", "j", "--JOB_RUN_ID", "jr_7", "--load_id", os.environ["LOAD_ID"]]
rc = 0
try:
    runpy.run_path(os.environ["DRIVER"], run_name="__main__")
except SystemExit as e:
    print("SystemExit:", e, file=sys.stderr)
    rc = 3
except RuntimeError as e:
    print("RuntimeError:", e, file=sys.stderr)
    rc = 4
json.dump(uploads, open(os.path.join(work, "uploads.json"), "w"))
sys.exit(rc)
